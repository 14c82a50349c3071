package dev.rdmarpc.core.internal;

/** Server call metrics; {@link #NOOP} when no meter registry is configured. */
public interface CallMetrics {
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
}
