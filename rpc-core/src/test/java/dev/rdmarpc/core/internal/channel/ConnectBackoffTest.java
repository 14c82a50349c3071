package dev.rdmarpc.core.internal.channel;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** gRPC's connection-backoff arithmetic with the random source pinned: initial 1 s, ×1.6, ±20 % jitter, at most 120 s. */
class ConnectBackoffTest {
    private static final long S = TimeUnit.SECONDS.toNanos(1);

    private static ConnectBackoff grpcDefaults(double random) {
        return new ConnectBackoff(ConnectBackoff.DEFAULT_INITIAL_NANOS, ConnectBackoff.DEFAULT_MAX_NANOS, () -> random);
    }

    @Test
    void withoutJitterTheBackoffGrowsBy16UpTo120Seconds() {
        ConnectBackoff b = grpcDefaults(0.5); // 0.5 is no jitter
        assertEquals(S, b.attemptStarted(), "the first attempt: the initial backoff, unjittered");
        long expected = S;
        for (int i = 0; i < 20; i++) {
            expected = (long) Math.min(120 * S, expected * 1.6);
            assertEquals(expected, b.attemptStarted(), "attempt " + (i + 2));
        }
        assertEquals(120 * S, b.attemptStarted(), "capped at max");
    }

    @Test
    void jitterIsPlusOrMinusTwentyPercentOfTheBackoff() {
        ConnectBackoff low = grpcDefaults(0.0);
        low.attemptStarted();
        assertEquals(Math.round(1.6 * S * 0.8), low.attemptStarted());
        ConnectBackoff high = grpcDefaults(Math.nextDown(1.0));
        high.attemptStarted();
        assertEquals(1.6 * S * 1.2, high.attemptStarted(), 1000.0);
        ConnectBackoff capped = grpcDefaults(0.0);
        for (int i = 0; i < 30; i++) {
            capped.attemptStarted();
        }
        assertEquals(96 * S, capped.attemptStarted(), "the jitter applies to the capped backoff too");
    }

    @Test
    void aSuccessStartsOverFromTheInitialBackoff() {
        ConnectBackoff b = grpcDefaults(0.5);
        b.attemptStarted();
        b.attemptStarted();
        b.attemptStarted();
        b.reset();
        assertEquals(S, b.attemptStarted());
        assertEquals((long) (1.6 * S), b.attemptStarted());
    }

    @Test
    void anAttemptMayTakeTheLongerOfItsBackoffAndTheConnectTimeout() {
        assertEquals(20 * S, ConnectBackoff.attemptTimeoutNanos(S, 20 * S));
        assertEquals(120 * S, ConnectBackoff.attemptTimeoutNanos(120 * S, 20 * S));
    }

    @Test
    void nonsenseSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ConnectBackoff(0, S, () -> 0.5));
        assertThrows(IllegalArgumentException.class, () -> new ConnectBackoff(2 * S, S, () -> 0.5));
    }
}
