package dev.rdmarpc.core.internal.metrics;

/** Call metrics of a server or a channel; {@link #NOOP} when no meter registry is configured. */
public interface CallMetrics {
    CallMetrics NOOP = new CallMetrics() {
    };

    /**
     * A call started; {@code transport} is the protocol of the connection it came on ({@code tcp}, {@code rdma},
     * {@code h2}), or null where the side does not tag calls with it (a channel's calls).
     */
    default void callStarted(String method, String transport) {
    }

    /** A call finished with {@code status} after {@code nanos}; {@code transport} as for {@link #callStarted}. */
    default void callFinished(String method, String transport, String status, long nanos) {
    }

    default void connectionOpened(String transport) {
    }

    default void connectionClosed(String transport) {
    }

    /** Message bytes received (MESSAGE frame payloads). */
    default void bytesReceived(int n) {
    }

    /**
     * A server limit refused work: {@code limit} is {@code connections}, {@code concurrent_streams},
     * {@code metadata_size} or {@code memory_budget}.
     */
    default void limitRefused(String limit) {
    }

    /** Message bytes sent (framed messages). */
    default void bytesSent(int n) {
    }

    /** A server sent a keepalive PING to a silent connection. */
    default void keepAlivePingSent() {
    }

    /** The client acknowledged a keepalive PING. */
    default void keepAlivePingAcknowledged() {
    }

    /** A connection was closed because nothing arrived after a keepalive PING. */
    default void connectionClosedByKeepAlive() {
    }

    /** A connection was closed because its peer sent more control frames than allowed. */
    default void connectionClosedForControlFrames() {
    }

    /** A server kept a connection off RDMA: {@code reason} is {@code no-client-certificate}. */
    default void upgradeRefused(String reason) {
    }
}
