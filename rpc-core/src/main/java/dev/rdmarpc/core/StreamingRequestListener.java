package dev.rdmarpc.core;

/**
 * The listener of a client- or bidi-streaming method of {@link ServerCalls}: invokes the method at once and feeds the
 * requests to the observer it returned, in the call's {@link CallContext}. Package-private in {@code dev.rdmarpc.core},
 * not in {@code core.internal}, because it makes the call context current ({@code CurrentCall}) and builds on
 * {@code ServerCalls}' response observer, neither of which is public API.
 */
final class StreamingRequestListener<ReqT, RespT> extends ServerCall.Listener<ReqT> {
    interface Invoker<ReqT, RespT> {
        StreamObserver<ReqT> invoke(StreamObserver<RespT> observer);
    }

    private final ServerCall<ReqT, RespT> call;
    private final ServerCalls.ResponseObserver<ReqT, RespT> observer;
    private final StreamObserver<ReqT> requests;
    private boolean halfClosed;

    StreamingRequestListener(ServerCall<ReqT, RespT> call, Metadata headers, Invoker<ReqT, RespT> invoker) {
        this.call = call;
        this.observer = new ServerCalls.ResponseObserver<>(call, headers);
        StreamObserver<ReqT> r;
        CallContext previous = observer.enter();
        try {
            r = invoker.invoke(observer);
        } catch (RuntimeException e) {
            observer.onError(e);
            r = null;
        } finally {
            CurrentCall.exit(previous);
        }
        observer.freeze();
        this.requests = r;
        if (r != null && observer.autoInbound()) {
            call.request(1);
        }
    }

    @Override
    public void onMessage(ReqT message) {
        if (requests == null) {
            return;
        }
        CallContext previous = observer.enter();
        try {
            requests.onNext(message);
        } catch (RuntimeException e) {
            observer.onError(e);
            return;
        } finally {
            CurrentCall.exit(previous);
        }
        if (observer.autoInbound()) {
            call.request(1);
        }
    }

    @Override
    public void onHalfClose() {
        if (requests == null || halfClosed) {
            return;
        }
        halfClosed = true;
        CallContext previous = observer.enter();
        try {
            requests.onCompleted();
        } catch (RuntimeException e) {
            observer.onError(e);
        } finally {
            CurrentCall.exit(previous);
        }
    }

    @Override
    public void onCancel() {
        observer.onCancel();
        if (requests != null && !halfClosed) {
            halfClosed = true;
            CallContext previous = observer.enter();
            try {
                requests.onError(Status.CANCELLED.withDescription("call cancelled").asException());
            } catch (RuntimeException ignored) {
                // the service's own observer failed on cancellation; nothing more to tell
            } finally {
                CurrentCall.exit(previous);
            }
        }
    }

    @Override
    public void onReady() {
        observer.onReady();
    }
}
