package dev.rdmarpc.core.internal.connection;

import java.time.Duration;

/**
 * The limits a side puts on the connections it accepts or makes: the control-frame budget (see
 * {@link ControlFrameBudget}) and the server's keepalive. Internal: public for the
 * channel and server packages and for RpcServer.
 *
 * @param controlFramesPerSecond sustained rate of counted control frames a peer may send
 * @param controlFrameBurst      counted control frames a peer may send at once
 * @param keepAliveTimeNanos     silence after which a server PINGs the connection; 0 = no keepalive
 * @param keepAliveTimeoutNanos  time after that PING in which something must arrive, or the connection is closed
 */
public record ConnectionGuards(int controlFramesPerSecond, int controlFrameBurst, long keepAliveTimeNanos,
                               long keepAliveTimeoutNanos) {
    /** Default sustained rate of counted control frames. */
    public static final int DEFAULT_CONTROL_FRAMES_PER_SECOND = 1_000;
    /** Default burst of counted control frames. */
    public static final int DEFAULT_CONTROL_FRAME_BURST = 10_000;
    /** Default silence before a server's keepalive PING. */
    public static final Duration DEFAULT_KEEPALIVE_TIME = Duration.ofMinutes(2);
    /** Default wait for anything after a keepalive PING. */
    public static final Duration DEFAULT_KEEPALIVE_TIMEOUT = Duration.ofSeconds(20);
    /** The defaults. */
    public static final ConnectionGuards DEFAULT = new ConnectionGuards(DEFAULT_CONTROL_FRAMES_PER_SECOND,
            DEFAULT_CONTROL_FRAME_BURST, DEFAULT_KEEPALIVE_TIME.toNanos(), DEFAULT_KEEPALIVE_TIMEOUT.toNanos());

    /** Checks the values. */
    public ConnectionGuards {
        if (controlFramesPerSecond <= 0 || controlFrameBurst <= 0) {
            throw new IllegalArgumentException("control frame rate and burst must be positive");
        }
        if (keepAliveTimeNanos < 0 || keepAliveTimeoutNanos <= 0) {
            throw new IllegalArgumentException("keepalive time must not be negative and its timeout must be positive");
        }
    }

    /** A fresh budget for one connection. */
    public ControlFrameBudget newControlFrameBudget() {
        return new ControlFrameBudget(controlFramesPerSecond, controlFrameBurst, System.nanoTime());
    }
}
