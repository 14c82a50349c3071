package dev.rdmarpc.core;

/** The response side of a server call: it also tells the handler of cancellation and the deadline. */
public abstract class ServerCallStreamObserver<RespT> extends CallStreamObserver<RespT> {

    /** True once the client cancelled, the deadline passed, or the server shut the call down. */
    public abstract boolean isCancelled();

    /** Runs the handler when the call is cancelled (client cancel, deadline, shutdown). */
    public abstract void setOnCancelHandler(Runnable onCancelHandler);

    /** The call's deadline as the client sent it, or null if it has none. */
    public abstract Deadline getDeadline();

    /** The request headers the client sent. */
    public abstract Metadata getRequestHeaders();

    /** Response headers to send before the first message (or with the trailers if none is sent). */
    public abstract void setResponseHeaders(Metadata headers);

    /**
     * Compresses the responses with {@code compression} ("gzip") when the client accepts it, as grpc-java's; call it
     * before the first response (see {@link ServerCall#setCompression}).
     */
    public abstract void setCompression(String compression);

    /** Trailers to send with the status when the call completes. */
    public abstract void setTrailers(Metadata trailers);

    /** The method being served. */
    public abstract MethodDescriptor<?, ?> getMethodDescriptor();

    /**
     * Swaps to manual flow control: no request reaches a streaming method's request observer unless {@link #request}ed
     * (none is asked for on its behalf). Call it while the method starts; the same as
     * {@link #disableAutoInboundFlowControl()}.
     */
    public void disableAutoRequest() {
        disableAutoInboundFlowControl();
    }
}
