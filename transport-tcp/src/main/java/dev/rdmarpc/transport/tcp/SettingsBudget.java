package dev.rdmarpc.transport.tcp;

/**
 * How many SETTINGS frames an HTTP/2 client may send, counted as core counts an rdmarpc client's PINGs (its
 * control-frame budget's defaults): a token bucket of {@link #BURST} refilled at {@link #PER_SECOND}. Each SETTINGS
 * costs the server an ACK and moves no call forward; a client past the budget is flooding, and its connection ends
 * with GOAWAY ENHANCE_YOUR_CALM. Used on the connection's I/O thread only.
 */
final class SettingsBudget {
    static final int BURST = 10_000;
    static final int PER_SECOND = 1_000;
    private static final long NANOS_PER_FRAME = 1_000_000_000L / PER_SECOND;
    private static final long FULL = BURST * NANOS_PER_FRAME;

    /** The budget left, in nanoseconds of refill: a frame takes {@link #NANOS_PER_FRAME}. */
    private long credit = FULL;
    private long last;

    SettingsBudget(long nowNanos) {
        this.last = nowNanos;
    }

    /** Takes one frame's worth at {@code nowNanos}; false when the budget is spent. */
    boolean tryTake(long nowNanos) {
        credit = Math.min(FULL, credit + (nowNanos - last)); // System.nanoTime() never goes back
        last = nowNanos;
        if (credit < NANOS_PER_FRAME) {
            return false;
        }
        credit -= NANOS_PER_FRAME;
        return true;
    }
}
