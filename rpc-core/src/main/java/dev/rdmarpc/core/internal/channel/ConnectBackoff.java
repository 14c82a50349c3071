package dev.rdmarpc.core.internal.channel;

import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * gRPC's connection backoff (grpc/doc/connection-backoff.md). The first attempt after a success (or ever) may be
 * followed by the next one {@code initial} after it started; each further attempt's backoff is the last one times
 * {@link #MULTIPLIER}, at most {@code max}, jittered by up to ±{@link #JITTER} of it. An attempt may take the longer of
 * its backoff and the channel's connect timeout (gRPC's MIN_CONNECT_TIMEOUT, 20 s by default). Pure arithmetic: the
 * channel keeps the time and the random source is given, so tests can pin both. Not thread-safe: the channel locks.
 */
final class ConnectBackoff {
    /** gRPC's defaults. */
    static final long DEFAULT_INITIAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long DEFAULT_MAX_NANOS = TimeUnit.SECONDS.toNanos(120);
    static final double MULTIPLIER = 1.6;
    static final double JITTER = 0.2;

    private final long initialNanos;
    private final long maxNanos;
    /** Uniform in [0, 1). */
    private final DoubleSupplier random;
    /** The backoff of the last attempt (before jitter); 0 when the next attempt is the first since a success. */
    private long backoffNanos;

    ConnectBackoff(long initialNanos, long maxNanos, DoubleSupplier random) {
        if (initialNanos <= 0 || maxNanos < initialNanos) {
            throw new IllegalArgumentException("backoff must be positive with max >= initial: " + initialNanos + ", " + maxNanos);
        }
        this.initialNanos = initialNanos;
        this.maxNanos = maxNanos;
        this.random = random;
    }

    /** An attempt starts: how long after its start the next may start, should this one fail. */
    long attemptStarted() {
        if (backoffNanos == 0) {
            backoffNanos = initialNanos;
            return initialNanos;
        }
        backoffNanos = (long) Math.min(maxNanos, backoffNanos * MULTIPLIER);
        double jitter = (random.getAsDouble() * 2 - 1) * JITTER; // uniform in [-JITTER, JITTER)
        return Math.round(backoffNanos * (1 + jitter));
    }

    /** A connection succeeded: the next attempt is a first one again. */
    void reset() {
        backoffNanos = 0;
    }

    /** How long an attempt whose backoff is {@code delayNanos} may take, with {@code minConnectNanos} the connect timeout. */
    static long attemptTimeoutNanos(long delayNanos, long minConnectNanos) {
        return Math.max(minConnectNanos, delayNanos);
    }
}
