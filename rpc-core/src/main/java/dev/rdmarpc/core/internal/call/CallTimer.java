package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.internal.exec.RpcExecutors;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * A call's deadline timer on core's shared timer thread: armed once per call, disarmed when the call ends first. One
 * timer serves every call of a recycled stream ({@link Recycling}): an expiry tells its owner which call it was armed
 * for (the generation given to {@link #arm}), so a late expiry cannot end the stream's next call.
 */
final class CallTimer {
    private final IntConsumer onExpiry;
    private Deadline deadline;
    private ScheduledFuture<?> timer;

    /** A timer that calls {@code onExpiry} with the generation it was armed for. */
    CallTimer(IntConsumer onExpiry) {
        this.onExpiry = onExpiry;
    }

    /** The deadline of the call it serves (so the call needs no field for it beside the timer). */
    Deadline deadline() {
        return deadline;
    }

    /** Sets the deadline of the call it serves next; the owner holds its lock. */
    void deadline(Deadline d) {
        this.deadline = d;
    }

    /** Runs the expiry for call {@code generation} on the timer thread after {@code nanos}; the owner holds its lock. */
    void arm(long nanos, int generation) {
        timer = RpcExecutors.timer().schedule(() -> onExpiry.accept(generation), nanos, TimeUnit.NANOSECONDS);
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
