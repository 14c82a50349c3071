package dev.rdmarpc.core;

/**
 * A {@link ServerCall} that forwards every method to another call, including the peer accessors
 * ({@link #getConnection()}, {@link #getSslSession()}); interceptors override what they change. As in grpc-java;
 * {@link SimpleForwardingServerCall} holds the delegate.
 */
public abstract class ForwardingServerCall<ReqT, RespT> extends ServerCall<ReqT, RespT> {

    /** The call every method is forwarded to. */
    protected abstract ServerCall<ReqT, RespT> delegate();

    @Override
    public void request(int n) {
        delegate().request(n);
    }

    @Override
    public void sendHeaders(Metadata headers) {
        delegate().sendHeaders(headers);
    }

    @Override
    public void setCompression(String compressor) {
        delegate().setCompression(compressor);
    }

    @Override
    public void sendMessage(RespT message) {
        delegate().sendMessage(message);
    }

    @Override
    public void sendMessage(RespT message, java.lang.foreign.MemorySegment attachment, Runnable onReleased) {
        delegate().sendMessage(message, attachment, onReleased);
    }

    @Override
    public void close(Status status, Metadata trailers) {
        delegate().close(status, trailers);
    }

    @Override
    public boolean isCancelled() {
        return delegate().isCancelled();
    }

    @Override
    public boolean isReady() {
        return delegate().isReady();
    }

    @Override
    public Deadline getDeadline() {
        return delegate().getDeadline();
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
        return delegate().getMethodDescriptor();
    }

    @Override
    public String getPeer() {
        return delegate().getPeer();
    }

    @Override
    public String getAuthority() {
        return delegate().getAuthority();
    }

    @Override
    public String getTransportName() {
        return delegate().getTransportName();
    }

    @Override
    public PeerConnection getConnection() {
        return delegate().getConnection();
    }

    @Override
    public java.util.List<ServiceDefinition> getServerServices() {
        return delegate().getServerServices();
    }

    @Override
    public javax.net.ssl.SSLSession getSslSession() {
        return delegate().getSslSession();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + delegate() + "}";
    }

    /** A {@link ForwardingServerCall} to a delegate given at construction. */
    public abstract static class SimpleForwardingServerCall<ReqT, RespT> extends ForwardingServerCall<ReqT, RespT> {
        private final ServerCall<ReqT, RespT> delegate;

        protected SimpleForwardingServerCall(ServerCall<ReqT, RespT> delegate) {
            this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
        }

        @Override
        protected ServerCall<ReqT, RespT> delegate() {
            return delegate;
        }
    }
}
