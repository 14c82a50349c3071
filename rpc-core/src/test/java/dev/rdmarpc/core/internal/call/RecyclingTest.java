package dev.rdmarpc.core.internal.call;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Recycling}: only the last party of a call that took every required step is told to recycle, and only once. */
class RecyclingTest {
    private static final int OPENED = 1, ENDED = 2;

    @Test
    void onlyTheLastPartyOfACallThatTookEveryStepRecyclesAndANewGenerationStarts() {
        Recycling r = new Recycling(OPENED | ENDED, 3);
        int first = r.generation();
        r.allow(OPENED);
        r.allow(ENDED);
        assertFalse(r.done(1));
        assertFalse(r.done(1), "the same party twice is still not all of them");
        assertFalse(r.done(2));
        assertTrue(r.isGeneration(first));
        assertTrue(r.done(0), "the last one recycles");
        assertFalse(r.isGeneration(first), "the stream serves a new call now");
        assertTrue(r.isGeneration(r.generation()));
    }

    @Test
    void aCallThatMissedAStepIsNeverRecycled() {
        Recycling r = new Recycling(OPENED | ENDED, 3);
        r.allow(OPENED); // ended other than by the allow-listed path
        assertFalse(r.done(0));
        assertFalse(r.done(1));
        assertFalse(r.done(2), "every party done, but the call did not end on an allow-listed path");
        assertTrue(r.isGeneration(0));
    }

    @Test
    void theNextCallMustTakeEveryStepAgain() {
        Recycling r = new Recycling(OPENED, 2);
        r.allow(OPENED);
        r.done(0);
        assertTrue(r.done(1));
        assertFalse(r.done(0));
        assertFalse(r.done(1), "the steps of the call before do not count for this one");
    }
}
