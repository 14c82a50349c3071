package dev.rdmarpc.core.internal;

/** Call metrics of a server or a channel; {@link #NOOP} when no meter registry is configured. */
interface CallMetrics {
    CallMetrics NOOP = new CallMetrics() {
    };

    default void callStarted(String method) {
    }

    default void callFinished(String method, String status, long nanos) {
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
