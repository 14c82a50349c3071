package dev.rdmarpc.bench;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Set once when the run must stop early (Ctrl-C): whatever waits notices within a few milliseconds. */
final class StopSignal {
    private volatile boolean stopped;

    void stop() {
        stopped = true;
    }

    boolean isStopped() {
        return stopped;
    }

    /**
     * Waits until {@code deadlineNanos} ({@link System#nanoTime()}), a stop, or {@code alsoWhen}.
     *
     * @return true if it waited the whole time
     */
    boolean sleepUntil(long deadlineNanos, BooleanSupplier alsoWhen) {
        while (true) {
            if (stopped || alsoWhen.getAsBoolean()) {
                return false;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return true;
            }
            LockSupport.parkNanos(Math.min(left, 20_000_000L));
        }
    }
}
