package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.Deadline;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A call's deadline timer on core's shared timer thread: armed once, disarmed when the call ends first. */
final class CallTimer {
    private final Deadline deadline;
    private ScheduledFuture<?> timer;

    /** A timer that keeps the call's {@code deadline} (so the call needs no field for it beside the timer). */
    CallTimer(Deadline deadline) {
        this.deadline = deadline;
    }

    /** The deadline given at construction. */
    Deadline deadline() {
        return deadline;
    }

    /** Runs {@code onExpiry} on the timer thread after {@code nanos}; the owner holds its lock. */
    void arm(long nanos, Runnable onExpiry) {
        timer = RpcExecutors.timer().schedule(onExpiry, nanos, TimeUnit.NANOSECONDS);
    }

    /** Stops the timer if it was armed and has not fired; the owner holds its lock. */
    void disarm() {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            timer = null;
            t.cancel(false);
        }
    }
}
