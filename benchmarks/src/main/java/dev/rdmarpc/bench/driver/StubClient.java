package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.BenchException;
import dev.rdmarpc.bench.CallKind;
import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** The benchmark client on a generated API's async stubs (grpc-java's or rdmarpc's, through a {@link StubApi}). */
final class StubClient implements BenchClient {
    private final List<StubChannel> channels;

    private StubClient(List<StubChannel> channels) {
        this.channels = channels;
    }

    /**
     * Opens {@code s.connections()} channels and completes a first call on each.
     *
     * @throws BenchException naming the transport and the server when a first call fails
     */
    static StubClient connect(String name, StubApi api, ClientSettings s) {
        List<StubChannel> channels = new ArrayList<>();
        try {
            for (int i = 0; i < s.connections(); i++) {
                StubChannel channel = api.open(s);
                channels.add(channel);
                firstCall(name, channel, s);
            }
            return new StubClient(channels);
        } catch (RuntimeException e) {
            channels.forEach(c -> c.abort().run());
            throw e;
        }
    }

    /** One unary call, answered within the connect timeout. */
    private static void firstCall(String name, StubChannel channel, ClientSettings s) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        String failed = name + ": first call to " + s.target() + " failed: ";
        try {
            channel.calls().unary().accept(BenchRequest.newBuilder().setPayload(Payloads.of(1)).build(), new DualObserver<>() {
                @Override
                public void onNext(BenchResponse value) {
                    // the answer is enough
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                    done.complete(null);
                }
            });
            done.get(s.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new BenchException(BenchException.FAILED, failed + describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new BenchException(BenchException.FAILED, failed + "no answer within " + s.connectTimeout().toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException(BenchException.FAILED, failed + "interrupted");
        } catch (RuntimeException e) {
            throw new BenchException(BenchException.FAILED, failed + describe(e), e);
        }
    }

    private static String describe(Throwable t) {
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    @Override
    public String negotiated() {
        return channels.get(0).negotiated().get();
    }

    @Override
    public Lane newLane(int index, Workload workload, LaneListener listener) {
        StubCalls c = channels.get(index % channels.size()).calls();
        BenchRequest request = workload.request();
        return workload.kind() == CallKind.BIDI
                ? new BidiLane(c, request, listener)
                : new CallLane(workload.kind() == CallKind.SERVER_STREAM ? c.serverStream() : c.unary(), request, listener);
    }

    @Override
    public void close() {
        channels.forEach(c -> c.close().run());
    }

    /** Unary or server-stream calls; reuses one observer while it is idle (always, in closed mode). */
    private static final class CallLane implements Lane {
        private final BiConsumer<BenchRequest, DualObserver<BenchResponse>> start;
        private final BenchRequest request;
        private final LaneListener listener;
        private final Observer cached = new Observer(true);

        CallLane(BiConsumer<BenchRequest, DualObserver<BenchResponse>> start, BenchRequest request, LaneListener listener) {
            this.start = start;
            this.request = request;
            this.listener = listener;
        }

        @Override
        public void call(long startNanos) {
            Observer o = cached.busy.compareAndSet(false, true) ? cached : new Observer(false);
            o.start = startNanos;
            try {
                start.accept(request, o);
            } catch (RuntimeException e) {
                o.onError(e);
            }
        }

        @Override
        public void close() {
            // calls are independent: nothing to end
        }

        private final class Observer implements DualObserver<BenchResponse> {
            final AtomicBoolean busy = new AtomicBoolean();
            final boolean reusable;
            long start;

            Observer(boolean reusable) {
                this.reusable = reusable;
            }

            @Override
            public void onNext(BenchResponse value) {
                // counted on completion
            }

            @Override
            public void onError(Throwable t) {
                long s = start;
                if (reusable) {
                    busy.set(false);
                }
                listener.onError(CallLane.this, s, t);
            }

            @Override
            public void onCompleted() {
                long s = start;
                if (reusable) {
                    busy.set(false);
                }
                listener.onComplete(CallLane.this, s);
            }
        }
    }

    /** Round trips on one bidi stream. */
    private static final class BidiLane extends OrderedLane implements DualObserver<BenchResponse> {
        private final BenchRequest request;
        private final Consumer<BenchRequest> send;
        private final Runnable halfClose;

        BidiLane(StubCalls calls, BenchRequest request, LaneListener listener) {
            super(listener);
            this.request = request;
            StubCalls.RequestStream requests = calls.bidi().apply(this);
            this.send = requests.send();
            this.halfClose = requests.halfClose();
        }

        @Override
        protected void sendOne() {
            send.accept(request);
        }

        @Override
        protected void halfClose() {
            halfClose.run();
        }

        @Override
        public void onNext(BenchResponse value) {
            responded();
        }

        @Override
        public void onError(Throwable t) {
            failed(t);
        }

        @Override
        public void onCompleted() {
            // the server ended the stream after our half-close
        }
    }
}
