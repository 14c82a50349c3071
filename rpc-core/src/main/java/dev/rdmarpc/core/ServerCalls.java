package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.call.EndedServerCall;
import dev.rdmarpc.core.internal.call.NullForEmptyMetadata;
import dev.rdmarpc.core.internal.call.ReleasableCall;
import dev.rdmarpc.core.internal.call.ReleasingHandler;

/** Adapts observer-style service methods to {@link ServerCallHandler}s; generated ImplBase classes use it. */
public final class ServerCalls {
    private ServerCalls() {
    }

    /** A unary method implementation. */
    @FunctionalInterface
    public interface UnaryMethod<ReqT, RespT> {
        void invoke(ReqT request, StreamObserver<RespT> responseObserver);
    }

    /** A server-streaming method implementation. */
    @FunctionalInterface
    public interface ServerStreamingMethod<ReqT, RespT> {
        void invoke(ReqT request, StreamObserver<RespT> responseObserver);
    }

    /** A client-streaming method implementation. */
    @FunctionalInterface
    public interface ClientStreamingMethod<ReqT, RespT> {
        StreamObserver<ReqT> invoke(StreamObserver<RespT> responseObserver);
    }

    /** A bidi-streaming method implementation. */
    @FunctionalInterface
    public interface BidiStreamingMethod<ReqT, RespT> {
        StreamObserver<ReqT> invoke(StreamObserver<RespT> responseObserver);
    }

    public static <ReqT, RespT> ServerCallHandler<ReqT, RespT> asyncUnaryCall(UnaryMethod<ReqT, RespT> method) {
        return new SingleRequestHandler<>(method::invoke); // made once per method, not per call
    }

    public static <ReqT, RespT> ServerCallHandler<ReqT, RespT> asyncServerStreamingCall(ServerStreamingMethod<ReqT, RespT> method) {
        return new SingleRequestHandler<>(method::invoke); // made once per method, not per call
    }

    public static <ReqT, RespT> ServerCallHandler<ReqT, RespT> asyncClientStreamingCall(ClientStreamingMethod<ReqT, RespT> method) {
        return new StreamingRequestHandler<>(method::invoke); // made once per method, not per call
    }

    public static <ReqT, RespT> ServerCallHandler<ReqT, RespT> asyncBidiStreamingCall(BidiStreamingMethod<ReqT, RespT> method) {
        return new StreamingRequestHandler<>(method::invoke); // made once per method, not per call
    }

    /**
     * Starts unary and server-streaming calls: a {@link SingleRequestObserver} behind a {@link SingleRequestListener}.
     * Core's own handler ({@link ReleasingHandler}): its observer lets core's call go once ended, so core may recycle
     * the stream. Takes null request headers for none ({@link NullForEmptyMetadata}): the response observer makes an
     * instance only when the service asks for them.
     */
    private record SingleRequestHandler<ReqT, RespT>(SingleRequestObserver.Invoker<ReqT, RespT> invoker)
            implements ServerCallHandler<ReqT, RespT>, ReleasingHandler, NullForEmptyMetadata {
        @Override
        public ServerCall.Listener<ReqT> startCall(ServerCall<ReqT, RespT> call, Metadata headers) {
            return new SingleRequestListener<>(new SingleRequestObserver<>(call, headers), invoker);
        }
    }

    /** Starts client- and bidi-streaming calls; takes null request headers for none, as {@link SingleRequestHandler} does. */
    private record StreamingRequestHandler<ReqT, RespT>(StreamingRequestListener.Invoker<ReqT, RespT> invoker)
            implements ServerCallHandler<ReqT, RespT>, NullForEmptyMetadata {
        @Override
        public ServerCall.Listener<ReqT> startCall(ServerCall<ReqT, RespT> call, Metadata headers) {
            return new StreamingRequestListener<>(call, headers, invoker);
        }
    }

    /** What an ImplBase method does when the service does not override it. */
    public static void asyncUnimplementedUnaryCall(MethodDescriptor<?, ?> method, StreamObserver<?> responseObserver) {
        responseObserver.onError(Status.UNIMPLEMENTED
                .withDescription("Method " + method.getFullMethodName() + " is unimplemented").asException());
    }

    /** What an ImplBase streaming method does when the service does not override it. */
    public static <ReqT> StreamObserver<ReqT> asyncUnimplementedStreamingCall(MethodDescriptor<?, ?> method, StreamObserver<?> responseObserver) {
        asyncUnimplementedUnaryCall(method, responseObserver);
        return new StreamObserver<>() {
            @Override
            public void onNext(ReqT value) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    /** The status a handler's exception turns into: its own if it carries one, else UNKNOWN with its message. */
    static Status statusOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StatusException se) {
                return se.getStatus();
            }
        }
        String message = t.getMessage();
        return Status.UNKNOWN.withDescription(message != null ? message : t.getClass().getName());
    }

    /** Trailers carried by a handler's StatusException, if any. */
    static Metadata trailersOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StatusException se && se.getTrailers() != null) {
                return se.getTrailers();
            }
        }
        return new Metadata();
    }

    /**
     * The response observer handed to service code, and the call's {@link CallContext}: current while the service's
     * code for the call runs ({@link #enter}), so the calls it makes inherit the deadline and the cancellation.
     */
    static class ResponseObserver<ReqT, RespT> extends ServerCallStreamObserver<RespT> implements CallContext {
        /** The call; a single-request observer puts its method's ended-call stand-in here once it let core's call go. */
        ServerCall<ReqT, RespT> call;
        /**
         * The client's metadata; null until asked for when the client sent none (see {@link NullForEmptyMetadata}).
         * Volatile: the instance made on first use is the one every thread gets.
         */
        private volatile Metadata requestHeaders;
        private volatile boolean cancelled;
        /** {@link #FROZEN}, {@link #SENT_HEADERS}, {@link #COMPLETED}, {@link #MANUAL_INBOUND}: one byte, not four booleans (40 bytes a call, not 48). */
        private byte flags;
        private Metadata responseHeaders;
        private Metadata trailers;
        private Runnable onReadyHandler;
        private Runnable onCancelHandler;
        /** The calls made for this one, to cancel with it; made when the first is, guarded by this observer. */
        private CancelListeners cancelListeners;

        private static final int FROZEN = 1, SENT_HEADERS = 2, COMPLETED = 4, MANUAL_INBOUND = 8;

        boolean has(int flag) {
            return (flags & flag) != 0;
        }

        void set(int flag) {
            flags |= (byte) flag;
        }

        /** The call ended through this observer (onCompleted or onError): a single-request observer lets it go. */
        void ended() {
        }

        ResponseObserver(ServerCall<ReqT, RespT> call, Metadata requestHeaders) {
            this.call = call;
            this.requestHeaders = requestHeaders;
        }

        void freeze() {
            set(FROZEN);
        }

        @Override
        public void onNext(RespT value) {
            if (cancelled) {
                return;
            }
            if (has(COMPLETED)) {
                throw new IllegalStateException("onNext after onCompleted or onError");
            }
            sendHeadersIfNeeded();
            call.sendMessage(value);
        }

        private void sendHeadersIfNeeded() {
            if (!has(SENT_HEADERS)) {
                set(SENT_HEADERS);
                call.sendHeaders(responseHeaders != null ? responseHeaders : NullForEmptyMetadata.emptyFor(call));
            }
        }

        @Override
        public void onError(Throwable t) {
            if (has(COMPLETED)) {
                return;
            }
            set(COMPLETED);
            if (cancelled) {
                ended();
                return;
            }
            Metadata md = trailersOf(t);
            if (trailers != null) {
                md.merge(trailers);
            }
            if (!has(SENT_HEADERS) && responseHeaders != null) {
                sendHeadersIfNeeded();
            }
            call.close(statusOf(t), md);
            ended();
        }

        @Override
        public void onCompleted() {
            if (has(COMPLETED)) {
                return;
            }
            set(COMPLETED);
            if (cancelled) {
                ended();
                return;
            }
            sendHeadersIfNeeded();
            call.close(Status.OK, trailers != null ? trailers : NullForEmptyMetadata.emptyFor(call));
            ended();
        }

        @Override
        public boolean isReady() {
            return call.isReady();
        }

        @Override
        public void setOnReadyHandler(Runnable handler) {
            this.onReadyHandler = handler;
        }

        @Override
        public void disableAutoInboundFlowControl() {
            if (has(FROZEN)) {
                throw new IllegalStateException("disableAutoInboundFlowControl must be called while the method starts");
            }
            set(MANUAL_INBOUND);
        }

        @Override
        public void request(int n) {
            call.request(n);
        }

        @Override
        public boolean isCancelled() {
            return cancelled || call.isCancelled();
        }

        @Override
        public void setOnCancelHandler(Runnable handler) {
            this.onCancelHandler = handler;
        }

        @Override
        public Deadline getDeadline() {
            return call.getDeadline();
        }

        @Override
        public Metadata getRequestHeaders() {
            Metadata h = requestHeaders;
            if (h == null) {
                synchronized (this) {
                    h = requestHeaders;
                    if (h == null) {
                        h = new Metadata(); // the client sent none: the service's own empty instance
                        requestHeaders = h;
                    }
                }
            }
            return h;
        }

        @Override
        public void setResponseHeaders(Metadata headers) {
            if (has(SENT_HEADERS)) {
                throw new IllegalStateException("response headers already sent");
            }
            this.responseHeaders = headers;
        }

        @Override
        public void setCompression(String compression) {
            if (has(SENT_HEADERS)) {
                throw new IllegalStateException("setCompression after the first response");
            }
            call.setCompression(compression);
        }

        @Override
        public void setTrailers(Metadata t) {
            this.trailers = t;
        }

        @Override
        public MethodDescriptor<?, ?> getMethodDescriptor() {
            return call.getMethodDescriptor();
        }

        void onReady() {
            if (onReadyHandler != null) {
                CallContext previous = enter();
                try {
                    onReadyHandler.run();
                } finally {
                    CurrentCall.exit(previous);
                }
            }
        }

        /** Cancels the calls made for this one, then runs the service's cancel handler (in this call's context). */
        void onCancel() {
            cancelled = true;
            cancelListeners().fire();
            if (onCancelHandler != null) {
                CallContext previous = enter();
                try {
                    onCancelHandler.run();
                } finally {
                    CurrentCall.exit(previous);
                }
            }
        }

        /** Makes this call's context current on this thread while the service's code runs; {@link CurrentCall#exit} after. */
        CallContext enter() {
            return CurrentCall.enter(this);
        }

        private synchronized CancelListeners cancelListeners() {
            CancelListeners ls = cancelListeners;
            if (ls == null) {
                ls = new CancelListeners();
                cancelListeners = ls;
            }
            return ls;
        }

        @Override
        public Runnable addCancelListener(Runnable listener) {
            return cancelListeners().add(listener);
        }

        boolean autoInbound() {
            return !has(MANUAL_INBOUND);
        }
    }

    /**
     * Unary and server-streaming: the response observer; its {@link SingleRequestListener} takes the one request and
     * the half close and invokes the method with it.
     */
    private static final class SingleRequestObserver<ReqT, RespT> extends ResponseObserver<ReqT, RespT> {
        interface Invoker<ReqT, RespT> {
            void invoke(ReqT request, StreamObserver<RespT> observer);
        }

        SingleRequestObserver(ServerCall<ReqT, RespT> call, Metadata headers) {
            super(call, headers);
            call.request(2);
        }

        void callCancelled() {
            onCancel();
        }

        void callReady() {
            onReady();
        }

        /**
         * Lets core's call go once this observer ended it: the stand-in answers from now on (not ready, not cancelled,
         * no deadline, the method), under this observer's lock, and core may reuse the call's objects. A query racing
         * the swap holds the lock, so it reaches the call before it is let go or the stand-in after.
         */
        @Override
        void ended() {
            if (call instanceof ReleasableCall core) { // core's stream itself, not an interceptor's wrapper
                ServerCall<ReqT, RespT> standIn = call.getMethodDescriptor().endedServerCall();
                synchronized (this) {
                    call = standIn;
                }
                core.released();
            }
        }

        @Override
        public synchronized boolean isReady() {
            return super.isReady();
        }

        @Override
        public synchronized void request(int n) {
            super.request(n);
        }

        @Override
        public synchronized boolean isCancelled() {
            return super.isCancelled();
        }

        @Override
        public synchronized Deadline getDeadline() {
            return super.getDeadline();
        }

        @Override
        public synchronized MethodDescriptor<?, ?> getMethodDescriptor() {
            return super.getMethodDescriptor();
        }
    }

    /** The stand-in for an ended call of {@code method} (see {@link MethodDescriptor#endedServerCall}). */
    static <ReqT, RespT> ServerCall<ReqT, RespT> endedCall(MethodDescriptor<ReqT, RespT> method) {
        return new EndedServerCall<>(method);
    }

    /**
     * A single-request call's listener: waits for the one request and the half close, then invokes the method with its
     * response observer; passes cancellation and readiness on to that observer. Every unary and server-streaming call
     * has one, whether or not interceptors wrap the handler: one path. Core's stream used to hand the events straight
     * to the observer when it started the handler unwrapped, which took two more interfaces and a second branch for each
     * callback in the delivery to save this object, 16 bytes a call (a header and one reference); JMH
     * {@code UnaryCallBenchmark -prof gc} reads the same B/op within its run-to-run noise either way. It invokes the
     * method itself rather than through the observer: every call a response makes on its way to the wire is one level
     * deeper in the JIT's inlining from the delivery loop, and a level less keeps the response's serialization inside
     * the limit (PERFORMANCE.md, "Inlining depth").
     */
    private static final class SingleRequestListener<ReqT, RespT> extends ServerCall.Listener<ReqT> {
        private final SingleRequestObserver<ReqT, RespT> observer;
        /** The method, until it is invoked (then null: it is invoked once). */
        private SingleRequestObserver.Invoker<ReqT, RespT> invoker;
        private ReqT request;

        SingleRequestListener(SingleRequestObserver<ReqT, RespT> observer, SingleRequestObserver.Invoker<ReqT, RespT> invoker) {
            this.observer = observer;
            this.invoker = invoker;
        }

        @Override
        public void onMessage(ReqT message) {
            if (request != null) {
                observer.call.close(Status.INTERNAL.withDescription("too many requests for a single-request method"),
                        new Metadata());
                return;
            }
            request = message;
        }

        @Override
        public void onHalfClose() {
            SingleRequestObserver.Invoker<ReqT, RespT> method = invoker;
            if (method == null) {
                return;
            }
            if (request == null) {
                observer.call.close(Status.INTERNAL.withDescription("half-closed without a request"), new Metadata());
                return;
            }
            invoker = null;
            CallContext previous = observer.enter();
            try {
                method.invoke(request, observer);
            } catch (RuntimeException e) {
                observer.onError(e);
            } finally {
                CurrentCall.exit(previous);
                observer.freeze();
            }
        }

        @Override
        public void onCancel() {
            observer.callCancelled();
        }

        @Override
        public void onReady() {
            observer.callReady();
        }
    }
}
