package dev.rdmarpc.core;

/**
 * A call made while a {@link CallContext} was current: it is cancelled when that context is, and stops listening for
 * that once it is closed; its listener runs with that context current, so calls made from it are children too. Made
 * only for calls started inside a handler; calls made elsewhere are not wrapped.
 */
final class ChildCall<ReqT, RespT> extends ForwardingClientCall<ReqT, RespT> implements Runnable {
    private final ClientCall<ReqT, RespT> delegate;
    private final CallContext parent;
    /** Removes this call's cancel listener from the parent; set once the call started, null again once closed. */
    private Runnable removal;
    private boolean closed;

    ChildCall(ClientCall<ReqT, RespT> delegate, CallContext parent) {
        this.delegate = delegate;
        this.parent = parent;
    }

    @Override
    protected ClientCall<ReqT, RespT> delegate() {
        return delegate;
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
        delegate.start(new InParent(listener), headers);
        Runnable r = parent.addCancelListener(this); // runs this at once when the parent is already cancelled
        boolean alreadyClosed;
        synchronized (this) {
            alreadyClosed = closed;
            if (!alreadyClosed) {
                removal = r;
            }
        }
        if (alreadyClosed) {
            r.run();
        }
    }

    /** The caller's listener, told of the call's events with the parent current, as the call was made. */
    private final class InParent extends ForwardingClientCallListener<RespT> {
        private final Listener<RespT> listener;

        InParent(Listener<RespT> listener) {
            this.listener = listener;
        }

        @Override
        protected Listener<RespT> delegate() {
            return listener;
        }

        @Override
        public void onHeaders(Metadata headers) {
            CallContext previous = CurrentCall.enter(parent);
            try {
                super.onHeaders(headers);
            } finally {
                CurrentCall.exit(previous);
            }
        }

        @Override
        public void onMessage(RespT message) {
            CallContext previous = CurrentCall.enter(parent);
            try {
                super.onMessage(message);
            } finally {
                CurrentCall.exit(previous);
            }
        }

        @Override
        public void onMessage(RespT message, Attachment attachment) {
            CallContext previous = CurrentCall.enter(parent);
            try {
                super.onMessage(message, attachment);
            } finally {
                CurrentCall.exit(previous);
            }
        }

        @Override
        public void onReady() {
            CallContext previous = CurrentCall.enter(parent);
            try {
                super.onReady();
            } finally {
                CurrentCall.exit(previous);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            closed();
            CallContext previous = CurrentCall.enter(parent);
            try {
                super.onClose(status, trailers);
            } finally {
                CurrentCall.exit(previous);
            }
        }
    }

    private void closed() {
        Runnable r;
        synchronized (this) {
            closed = true;
            r = removal;
            removal = null;
        }
        if (r != null) {
            r.run();
        }
    }

    /** The parent was cancelled. */
    @Override
    public void run() {
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        delegate.cancel("the server call this call was made for was cancelled", null);
    }
}
