package dev.rdmarpc.transport.tcp;

/**
 * Keepalive enforcement for HTTP/2 clients, as grpc-java's server does it: a PING is acceptable when the last
 * acceptable one is at least {@link #MIN_INTERVAL_NANOS} old (two hours when the client has no call open); each other
 * one is a strike, and the third strike since this side last sent HEADERS or DATA means "too many pings" (the
 * connection ends with GOAWAY ENHANCE_YOUR_CALM). Used on the connection's I/O thread only.
 */
final class PingPolicy {
    /** grpc's default permitKeepAliveTime: 5 minutes. */
    static final long MIN_INTERVAL_NANOS = 5L * 60 * 1_000_000_000L;
    /** grpc's interval for PINGs on a connection without calls: 2 hours. */
    static final long IDLE_INTERVAL_NANOS = 2L * 60 * 60 * 1_000_000_000L;
    /** Strikes tolerated; one more ends the connection. */
    static final int MAX_STRIKES = 2;

    private final long epoch;
    private long lastValid;
    private int strikes;

    PingPolicy(long nowNanos) {
        this.epoch = nowNanos;
        this.lastValid = nowNanos;
    }

    /** Whether a PING received at {@code nowNanos} may be answered; false: too many pings. */
    boolean acceptable(long nowNanos, boolean callsOpen) {
        long interval = callsOpen ? MIN_INTERVAL_NANOS : IDLE_INTERVAL_NANOS;
        if (nowNanos - lastValid >= interval) {
            lastValid = nowNanos;
            return true;
        }
        return ++strikes <= MAX_STRIKES;
    }

    /** This side sent HEADERS or DATA: the client's PINGs start afresh (it may be measuring the connection). */
    void reset() {
        lastValid = epoch;
        strikes = 0;
    }
}
