package dev.rdmarpc.core;

/**
 * A {@link ClientCall} that forwards every method to another call; interceptors override what they change. As in
 * grpc-java; {@link SimpleForwardingClientCall} holds the delegate.
 */
public abstract class ForwardingClientCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

    /** The call every method is forwarded to. */
    protected abstract ClientCall<ReqT, RespT> delegate();

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
        delegate().start(listener, headers);
    }

    @Override
    public void request(int n) {
        delegate().request(n);
    }

    @Override
    public void cancel(String message, Throwable cause) {
        delegate().cancel(message, cause);
    }

    @Override
    public void halfClose() {
        delegate().halfClose();
    }

    @Override
    public void sendMessage(ReqT message) {
        delegate().sendMessage(message);
    }

    @Override
    public void sendMessage(ReqT message, java.lang.foreign.MemorySegment attachment, Runnable onReleased) {
        delegate().sendMessage(message, attachment, onReleased);
    }

    @Override
    public boolean isReady() {
        return delegate().isReady();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + delegate() + "}";
    }

    /** A {@link ForwardingClientCall} to a delegate given at construction. */
    public abstract static class SimpleForwardingClientCall<ReqT, RespT> extends ForwardingClientCall<ReqT, RespT> {
        private final ClientCall<ReqT, RespT> delegate;

        protected SimpleForwardingClientCall(ClientCall<ReqT, RespT> delegate) {
            this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
        }

        @Override
        protected ClientCall<ReqT, RespT> delegate() {
            return delegate;
        }
    }
}
