package dev.rdmarpc.transport.tcp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SETTINGS budget as a clock the test sets: the burst at once, then the refill rate, never more than the burst. */
class SettingsBudgetTest {
    private static final long SECOND = 1_000_000_000L;

    private static int takeAll(SettingsBudget b, long now) {
        int n = 0;
        while (b.tryTake(now)) {
            n++;
        }
        return n;
    }

    @Test
    void aBurstThenTheRefillRate() {
        SettingsBudget b = new SettingsBudget(0);
        assertEquals(SettingsBudget.BURST, takeAll(b, 0), "the burst at once");
        assertFalse(b.tryTake(0));
        assertEquals(SettingsBudget.PER_SECOND, takeAll(b, SECOND), "a second later, a second's refill");
        assertEquals(1, takeAll(b, SECOND + SECOND / SettingsBudget.PER_SECOND), "a frame's worth of time, one frame");
    }

    @Test
    void anIdleClientGetsNoMoreThanTheBurst() {
        SettingsBudget b = new SettingsBudget(0);
        assertEquals(SettingsBudget.BURST, takeAll(b, 3_600 * SECOND));
    }

    @Test
    void aWellBehavedClientNeverRunsOut() {
        SettingsBudget b = new SettingsBudget(0);
        for (long t = 0; t < 60 * SECOND; t += SECOND / 10) { // ten SETTINGS a second for a minute
            assertTrue(b.tryTake(t), "at " + t);
        }
    }
}
