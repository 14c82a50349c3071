package dev.rdmarpc.core.internal.channel;

/**
 * A channel's client keepalive and reconnect backoff.
 *
 * @param keepAliveTimeNanos    PING after this much silence from the server; 0 for no keepalive
 * @param keepAliveTimeoutNanos close the connection when nothing answers a PING within this
 * @param backoffInitialNanos   the first reconnect backoff ({@link ConnectBackoff}); 0 for none
 * @param backoffMaxNanos       the largest reconnect backoff
 */
public record ClientLiveness(long keepAliveTimeNanos, long keepAliveTimeoutNanos, long backoffInitialNanos,
                             long backoffMaxNanos) {
    /** The defaults of a channel, as grpc-java's: keepalive off, gRPC's connection backoff (1 s up to 120 s). */
    public static final ClientLiveness CHANNEL_DEFAULTS = new ClientLiveness(0, 0, ConnectBackoff.DEFAULT_INITIAL_NANOS,
            ConnectBackoff.DEFAULT_MAX_NANOS);
}
