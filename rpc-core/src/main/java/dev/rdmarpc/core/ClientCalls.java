package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.call.DirectUnaryCall;
import dev.rdmarpc.core.internal.call.NullForEmptyMetadata;
import dev.rdmarpc.core.internal.call.UnaryObserverClose;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;

/** Adapts {@link ClientCall} to the async, blocking and future call styles; generated stubs use it. */
public final class ClientCalls {
    private ClientCalls() {
    }

    // ---------------------------------------------------------------- async

    /** Unary call; the observer gets one value then completion, or an error. */
    public static <ReqT, RespT> void asyncUnaryCall(ClientCall<ReqT, RespT> call, ReqT request, StreamObserver<RespT> responseObserver) {
        asyncOneRequest(call, request, responseObserver, false);
    }

    /**
     * Unary call on {@code channel}: the same as {@code asyncUnaryCall(channel.newCall(method, options), request,
     * responseObserver)}. Generated stubs use this form: as nobody outside core sees the call, an {@link RpcChannel}
     * (not wrapped by interceptors) runs it through its unary entry, on a stream reused from an ended call.
     */
    public static <ReqT, RespT> void asyncUnaryCall(Channel channel, MethodDescriptor<ReqT, RespT> method, CallOptions options,
                                                    ReqT request, StreamObserver<RespT> responseObserver) {
        if (!(responseObserver instanceof ClientResponseObserver<?, ?>) && channel instanceof RpcChannel pooled
                && pooled.startPooledUnary(method, options, request, responseObserver)) {
            return;
        }
        asyncUnaryCall(channel.newCall(method, options), request, responseObserver);
    }

    /** Server-streaming call; the observer gets every value then completion, or an error. */
    public static <ReqT, RespT> void asyncServerStreamingCall(ClientCall<ReqT, RespT> call, ReqT request, StreamObserver<RespT> responseObserver) {
        asyncOneRequest(call, request, responseObserver, true);
    }

    /** Client-streaming call; returns the observer the caller sends requests into. */
    public static <ReqT, RespT> StreamObserver<ReqT> asyncClientStreamingCall(ClientCall<ReqT, RespT> call, StreamObserver<RespT> responseObserver) {
        return asyncStreamingRequest(call, responseObserver, false);
    }

    /** Bidi-streaming call; returns the observer the caller sends requests into. */
    public static <ReqT, RespT> StreamObserver<ReqT> asyncBidiStreamingCall(ClientCall<ReqT, RespT> call, StreamObserver<RespT> responseObserver) {
        return asyncStreamingRequest(call, responseObserver, true);
    }

    private static <ReqT, RespT> void asyncOneRequest(ClientCall<ReqT, RespT> call, ReqT request,
                                                      StreamObserver<RespT> observer, boolean streaming) {
        CallToObserver<ReqT, RespT> adapter = observer instanceof ClientResponseObserver<?, ?>
                ? new CallToObserver<>(call, observer, streaming) : null;
        if (adapter == null && !streaming && call instanceof DirectUnaryCall<?, ?> direct) {
            // core's call itself: core's one unary path, which ends into the observer with no listener object
            @SuppressWarnings("unchecked")
            DirectUnaryCall<ReqT, RespT> typed = (DirectUnaryCall<ReqT, RespT>) direct;
            typed.runUnary(request, observer);
            return;
        }
        try {
            if (adapter != null) {
                adapter.start();
            } else {
                // nobody can see a request-side observer: the response listener alone drives the call
                ResponseListener.start(call, observer, streaming, null);
            }
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException | Error e) {
            cancelAfter(call, e);
            throw e;
        }
    }

    private static <ReqT, RespT> StreamObserver<ReqT> asyncStreamingRequest(ClientCall<ReqT, RespT> call,
                                                                           StreamObserver<RespT> observer, boolean streaming) {
        CallToObserver<ReqT, RespT> adapter = new CallToObserver<>(call, observer, streaming);
        try {
            adapter.start();
        } catch (RuntimeException | Error e) {
            cancelAfter(call, e);
            throw e;
        }
        return adapter;
    }

    /**
     * Cancels {@code call} because {@code t} was thrown while it started or sent its request (the caller rethrows
     * {@code t}): as in grpc-java, a call that failed to start does not hang until its channel closes.
     */
    private static void cancelAfter(ClientCall<?, ?> call, Throwable t) {
        try {
            call.cancel("exception while starting the call or sending its request", t);
        } catch (RuntimeException | Error suppressed) {
            t.addSuppressed(suppressed);
        }
    }

    /** Drives a call for an observer, and is the request-side observer handed back to the caller. */
    private static final class CallToObserver<ReqT, RespT> extends ClientCallStreamObserver<ReqT> {
        private final ClientCall<ReqT, RespT> call;
        private final StreamObserver<RespT> observer;
        private final boolean streamingResponse;
        private boolean autoInbound = true;
        /** Responses asked for as the call starts when automatic requests are off. */
        private int initialRequest;
        private boolean started;
        private Runnable onReady;
        private boolean halfClosed;

        CallToObserver(ClientCall<ReqT, RespT> call, StreamObserver<RespT> observer, boolean streamingResponse) {
            this.call = call;
            this.observer = observer;
            this.streamingResponse = streamingResponse;
            if (observer instanceof ClientResponseObserver<?, ?> cro) {
                @SuppressWarnings("unchecked")
                ClientResponseObserver<ReqT, RespT> typed = (ClientResponseObserver<ReqT, RespT>) cro;
                typed.beforeStart(this);
            }
        }

        void start() {
            started = true;
            ResponseListener.start(call, observer, streamingResponse, this);
        }

        @Override
        public void onNext(ReqT value) {
            if (halfClosed) {
                throw new IllegalStateException("onNext after onCompleted or onError");
            }
            call.sendMessage(value);
        }

        @Override
        public void onError(Throwable t) {
            halfClosed = true;
            call.cancel("the client's request observer got onError", t);
        }

        @Override
        public void onCompleted() {
            halfClosed = true;
            call.halfClose();
        }

        @Override
        public boolean isReady() {
            return call.isReady();
        }

        @Override
        public void setOnReadyHandler(Runnable handler) {
            this.onReady = handler;
        }

        @Override
        public void disableAutoInboundFlowControl() {
            disableAutoRequestWithInitial(1);
        }

        @Override
        public void disableAutoRequestWithInitial(int request) {
            if (started) {
                throw new IllegalStateException("automatic requests can only be turned off in beforeStart");
            }
            if (request < 0) {
                throw new IllegalArgumentException("initial request count must not be negative: " + request);
            }
            autoInbound = false;
            initialRequest = request;
        }

        @Override
        public void request(int n) {
            call.request(n);
        }

        @Override
        public void cancel(String message, Throwable cause) {
            call.cancel(message, cause);
        }
    }

    /**
     * Delivers a call's responses to an observer. The request-side observer ({@code requests}), when the caller can see
     * one, decides inbound flow control and gets onReady; without one, every response is asked for automatically.
     */
    private static final class ResponseListener<ReqT, RespT> extends ClientCall.Listener<RespT> implements NullForEmptyMetadata {
        private final ClientCall<ReqT, RespT> call;
        private final StreamObserver<RespT> observer;
        private final boolean streamingResponse;
        private final CallToObserver<ReqT, RespT> requests;
        private RespT unaryValue;

        private ResponseListener(ClientCall<ReqT, RespT> call, StreamObserver<RespT> observer, boolean streamingResponse,
                                 CallToObserver<ReqT, RespT> requests) {
            this.call = call;
            this.observer = observer;
            this.streamingResponse = streamingResponse;
            this.requests = requests;
        }

        /** Starts {@code call} with a listener for {@code observer} and asks for the first responses. */
        static <ReqT, RespT> void start(ClientCall<ReqT, RespT> call, StreamObserver<RespT> observer, boolean streamingResponse,
                                        CallToObserver<ReqT, RespT> requests) {
            ClientCall.Listener<RespT> listener = !streamingResponse && requests == null
                    ? new UnaryListener<>(call, observer)
                    : new ResponseListener<>(call, observer, streamingResponse, requests);
            call.start(listener, NullForEmptyMetadata.emptyFor(call));
            if (requests != null && !requests.autoInbound) {
                call.request(requests.initialRequest);
            } else {
                call.request(streamingResponse ? 1 : 2);
            }
        }

        @Override
        public void onMessage(RespT message) {
            if (streamingResponse) {
                observer.onNext(message);
                if (requests == null || requests.autoInbound) {
                    call.request(1);
                }
            } else if (unaryValue != null) {
                call.cancel(UnaryObserverClose.SECOND_RESPONSE, null);
            } else {
                unaryValue = message;
            }
        }

        /** {@code trailers} is null when there are none (see {@link NullForEmptyMetadata}): the observer gets its own. */
        @Override
        public void onClose(Status status, Metadata trailers) {
            if (!streamingResponse) {
                UnaryObserverClose.close(observer, status, trailers, unaryValue);
            } else if (!status.isOk()) {
                observer.onError(status.asException(trailers != null ? trailers : new Metadata()));
            } else {
                observer.onCompleted();
            }
        }

        @Override
        public void onReady() {
            Runnable handler = requests != null ? requests.onReady : null;
            if (handler != null) {
                handler.run();
            }
        }
    }

    /**
     * The adapter of a plain async unary call (an observer with no request side) on a call that is not core's own (an
     * interceptor's or another {@link ClientCall}; core's own, a {@link DirectUnaryCall}, needs no listener): delivers
     * the one response as grpc-java's {@code ClientCalls} does, with only the fields it needs (24 bytes a call, not
     * 32), what {@link ResponseListener} does for it.
     */
    private static final class UnaryListener<ReqT, RespT> extends ClientCall.Listener<RespT> implements NullForEmptyMetadata {
        private final ClientCall<ReqT, RespT> call;
        private final StreamObserver<RespT> observer;
        private RespT value;

        UnaryListener(ClientCall<ReqT, RespT> call, StreamObserver<RespT> observer) {
            this.call = call;
            this.observer = observer;
        }

        @Override
        public void onMessage(RespT message) {
            if (value != null) {
                call.cancel(UnaryObserverClose.SECOND_RESPONSE, null);
            } else {
                value = message;
            }
        }

        /** {@code trailers} is null when there are none (see {@link NullForEmptyMetadata}): the observer gets its own. */
        @Override
        public void onClose(Status status, Metadata trailers) {
            UnaryObserverClose.close(observer, status, trailers, value);
        }
    }

    // ---------------------------------------------------------------- blocking

    /** Unary call that waits for the response on the caller's thread; throws {@link StatusException}. */
    public static <ReqT, RespT> RespT blockingUnaryCall(Channel channel, MethodDescriptor<ReqT, RespT> method,
                                                        CallOptions options, ReqT request) {
        ThreadlessExecutor executor = new ThreadlessExecutor();
        ClientCall<ReqT, RespT> call = channel.newCall(method, options.withExecutor(executor));
        UnaryResult<RespT> result = new UnaryResult<>();
        try {
            call.start(result, NullForEmptyMetadata.emptyFor(call));
            call.request(2);
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException | Error e) {
            cancelAfter(call, e);
            throw e;
        }
        boolean interrupted = false;
        try {
            while (!result.done) {
                try {
                    executor.waitAndDrain();
                } catch (InterruptedException e) {
                    interrupted = true;
                    call.cancel("the calling thread was interrupted", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (!result.status.isOk()) {
            throw result.status.asException(result.trailers);
        }
        if (result.value == null) {
            throw Status.INTERNAL.withDescription("server closed the unary call with OK but sent no response")
                    .asException(result.trailers != null ? result.trailers : new Metadata());
        }
        return result.value;
    }

    /** Takes null trailers for none ({@link NullForEmptyMetadata}); they reach the caller only in an exception, made non-null. */
    private static final class UnaryResult<RespT> extends ClientCall.Listener<RespT> implements NullForEmptyMetadata {
        RespT value;
        Status status;
        Metadata trailers;
        boolean done;

        @Override
        public void onMessage(RespT message) {
            value = message;
        }

        @Override
        public void onClose(Status s, Metadata t) {
            status = s;
            trailers = t != null ? t : (s.isOk() ? null : new Metadata());
            done = true;
        }
    }

    /**
     * Server-streaming call read through an iterator on the caller's thread. Responses are requested
     * one at a time as the iterator is read, so a slow reader holds back the server. Errors surface
     * as {@link StatusException} from {@code hasNext}/{@code next}.
     */
    public static <ReqT, RespT> Iterator<RespT> blockingServerStreamingCall(Channel channel, MethodDescriptor<ReqT, RespT> method,
                                                                           CallOptions options, ReqT request) {
        ThreadlessExecutor executor = new ThreadlessExecutor();
        ClientCall<ReqT, RespT> call = channel.newCall(method, options.withExecutor(executor));
        BlockingResponseIterator<RespT> it = new BlockingResponseIterator<>(call, executor);
        try {
            call.start(it.listener, new Metadata());
            call.request(1);
            call.sendMessage(request);
            call.halfClose();
        } catch (RuntimeException | Error e) {
            cancelAfter(call, e);
            throw e;
        }
        return it;
    }

    private static final class BlockingResponseIterator<RespT> implements Iterator<RespT> {
        private final ClientCall<?, RespT> call;
        private final ThreadlessExecutor executor;
        private final java.util.ArrayDeque<RespT> buffered = new java.util.ArrayDeque<>(2);
        private Status closedStatus;
        private Metadata closedTrailers;
        final ClientCall.Listener<RespT> listener = new ClientCall.Listener<>() {
            @Override
            public void onMessage(RespT message) {
                buffered.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closedStatus = status;
                closedTrailers = trailers;
            }
        };

        BlockingResponseIterator(ClientCall<?, RespT> call, ThreadlessExecutor executor) {
            this.call = call;
            this.executor = executor;
        }

        @Override
        public boolean hasNext() {
            executor.drain();
            while (buffered.isEmpty() && closedStatus == null) {
                try {
                    executor.waitAndDrain();
                } catch (InterruptedException e) {
                    call.cancel("the reading thread was interrupted", e);
                    Thread.currentThread().interrupt();
                    throw Status.CANCELLED.withDescription("interrupted while waiting for the next response").withCause(e).asException();
                }
            }
            if (!buffered.isEmpty()) {
                return true;
            }
            if (!closedStatus.isOk()) {
                throw closedStatus.asException(closedTrailers);
            }
            return false;
        }

        @Override
        public RespT next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            RespT v = buffered.poll();
            call.request(1);
            return v;
        }
    }

    // ---------------------------------------------------------------- future

    /** Unary call as a future; cancelling the future cancels the call. */
    public static <ReqT, RespT> CompletableFuture<RespT> futureUnaryCall(ClientCall<ReqT, RespT> call, ReqT request) {
        CompletableFuture<RespT> future = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean cancelled = super.cancel(mayInterruptIfRunning);
                if (cancelled) {
                    call.cancel("the future was cancelled", null);
                }
                return cancelled;
            }
        };
        asyncUnaryCall(call, request, new StreamObserver<>() {
            @Override
            public void onNext(RespT value) {
                future.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                future.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        return future;
    }
}
