package dev.rdmarpc.core;

/** A {@link StreamObserver} with flow control: readiness and manual inbound requests. */
public abstract class CallStreamObserver<V> implements StreamObserver<V> {

    /** True while onNext can be called without buffering past the flow-control window. */
    public abstract boolean isReady();

    /** Runs the handler (on the call's executor) each time the stream turns ready. */
    public abstract void setOnReadyHandler(Runnable onReadyHandler);

    /** Stops automatic requests of inbound messages; call before the call starts delivering. */
    public abstract void disableAutoInboundFlowControl();

    /** Requests n more inbound messages (with automatic flow control disabled); 0 is a no-op, a negative n is refused. */
    public abstract void request(int n);
}
