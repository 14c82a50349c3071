package dev.rdmarpc.core.internal.connection;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The control-frame token bucket, on an explicit clock. */
class ControlFrameBudgetTest {
    private static final long SECOND = 1_000_000_000L;

    private static int takeAll(ControlFrameBudget b, long now) {
        int n = 0;
        while (b.tryTake(now)) {
            n++;
        }
        return n;
    }

    @Test
    void aBurstAtOnceThenTheRate() {
        long t0 = 123_456_789L;
        ControlFrameBudget b = new ControlFrameBudget(10, 25, t0);
        assertEquals(25, takeAll(b, t0), "the whole burst at once");
        assertFalse(b.tryTake(t0 + SECOND / 10 - 1), "nothing before a token has come back");
        assertTrue(b.tryTake(t0 + SECOND / 10));
        assertEquals(10, takeAll(b, t0 + SECOND + SECOND / 10), "ten per second after that");
    }

    @Test
    void aQuietPeriodRefillsTheBurstButNoMore() {
        long t0 = -5 * SECOND; // nanoTime may be negative
        ControlFrameBudget b = new ControlFrameBudget(1_000, 100, t0);
        assertEquals(100, takeAll(b, t0));
        assertEquals(100, takeAll(b, t0 + 3600 * SECOND), "an hour of quiet gives back the burst, not more");
    }

    @Test
    void aSteadyRateWithinTheLimitIsNeverRefused() {
        long t = 0;
        ControlFrameBudget b = new ControlFrameBudget(100, 1, t);
        for (int i = 0; i < 10_000; i++) {
            assertTrue(b.tryTake(t), "frame " + i);
            t += SECOND / 100;
        }
    }
}
