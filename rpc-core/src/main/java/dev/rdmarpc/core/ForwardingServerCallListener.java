package dev.rdmarpc.core;

/**
 * A {@link ServerCall.Listener} that forwards every callback to another listener; interceptors override what they
 * observe or change. As in grpc-java; {@link SimpleForwardingServerCallListener} holds the delegate.
 */
public abstract class ForwardingServerCallListener<ReqT> extends ServerCall.Listener<ReqT> {

    /** The listener every callback is forwarded to. */
    protected abstract ServerCall.Listener<ReqT> delegate();

    @Override
    public void onMessage(ReqT message) {
        delegate().onMessage(message);
    }

    @Override
    public void onMessage(ReqT message, Attachment attachment) {
        delegate().onMessage(message, attachment);
    }

    @Override
    public void onHalfClose() {
        delegate().onHalfClose();
    }

    @Override
    public void onCancel() {
        delegate().onCancel();
    }

    @Override
    public void onComplete() {
        delegate().onComplete();
    }

    @Override
    public void onReady() {
        delegate().onReady();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + delegate() + "}";
    }

    /** A {@link ForwardingServerCallListener} to a delegate given at construction. */
    public abstract static class SimpleForwardingServerCallListener<ReqT> extends ForwardingServerCallListener<ReqT> {
        private final ServerCall.Listener<ReqT> delegate;

        protected SimpleForwardingServerCallListener(ServerCall.Listener<ReqT> delegate) {
            this.delegate = java.util.Objects.requireNonNull(delegate, "delegate");
        }

        @Override
        protected ServerCall.Listener<ReqT> delegate() {
            return delegate;
        }
    }
}
