package dev.rdmarpc.core;

/**
 * A {@link ClientCall.Listener} that forwards every callback to another listener; interceptors override what they
 * observe or change. As in grpc-java; {@link SimpleForwardingClientCallListener} holds the delegate.
 */
public abstract class ForwardingClientCallListener<RespT> extends ClientCall.Listener<RespT> {

    /** The listener every callback is forwarded to. */
    protected abstract ClientCall.Listener<RespT> delegate();

    @Override
    public void onHeaders(Metadata headers) {
        delegate().onHeaders(headers);
    }

    @Override
    public void onMessage(RespT message) {
        delegate().onMessage(message);
    }

    @Override
    public void onMessage(RespT message, Attachment attachment) {
        delegate().onMessage(message, attachment);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
        delegate().onClose(status, trailers);
    }

    @Override
    public void onReady() {
        delegate().onReady();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + delegate() + "}";
    }

    /** A {@link ForwardingClientCallListener} to a delegate given at construction. */
    public abstract static class SimpleForwardingClientCallListener<RespT> extends ForwardingClientCallListener<RespT> {
        private final ClientCall.Listener<RespT> delegate;

        protected SimpleForwardingClientCallListener(ClientCall.Listener<RespT> delegate) {
            this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
        }

        @Override
        protected ClientCall.Listener<RespT> delegate() {
            return delegate;
        }
    }
}
