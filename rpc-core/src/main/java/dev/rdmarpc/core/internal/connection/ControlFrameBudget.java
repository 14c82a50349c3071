package dev.rdmarpc.core.internal.connection;

/**
 * A token bucket over the frames of one connection that make this side work without moving a call forward (PINGs to
 * answer, frames for streams that have ended, empty frames): {@code perSecond} sustained, {@code burst} at once.
 * Kept as the time the bucket would be full again (no timer, no allocation); used by the connection's one reading
 * thread at a time.
 */
final class ControlFrameBudget {
    private final int perSecond;
    private final int burst;
    private final long nanosPerFrame;
    /** Most a full bucket's refill time may run ahead of now: {@code (burst - 1)} frames' worth. */
    private final long slackNanos;
    /** When the bucket will be full again, assuming no more frames ({@code System.nanoTime()} scale). */
    private long fullAt;

    ControlFrameBudget(int perSecond, int burst, long nowNanos) {
        if (perSecond <= 0 || burst <= 0) {
            throw new IllegalArgumentException("control frame rate and burst must be positive: " + perSecond + "/s, burst " + burst);
        }
        this.perSecond = perSecond;
        this.burst = burst;
        this.nanosPerFrame = Math.max(1, 1_000_000_000L / perSecond);
        this.slackNanos = (burst - 1) * nanosPerFrame;
        this.fullAt = nowNanos;
    }

    /** Takes one frame's token at {@code nowNanos}; false (and nothing taken) when the bucket is empty. */
    boolean tryTake(long nowNanos) {
        long start = fullAt - nowNanos < 0 ? nowNanos : fullAt;
        if (start - nowNanos > slackNanos) {
            return false;
        }
        fullAt = start + nanosPerFrame;
        return true;
    }

    /** "N/s with a burst of B", for the reason a connection is closed. */
    String describe() {
        return perSecond + "/s with a burst of " + burst;
    }
}
