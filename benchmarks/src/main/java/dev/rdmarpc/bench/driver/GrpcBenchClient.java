package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.BenchException;
import dev.rdmarpc.bench.CallKind;
import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceGrpc;
import dev.rdmarpc.grpc.RdmaChannelBuilder;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/** The benchmark client on grpc-java's API: generated async stubs over stock Netty or rdmarpc's transport. */
final class GrpcBenchClient implements BenchClient {
    private final ManagedChannel[] channels;
    private final BenchServiceGrpc.BenchServiceStub[] stubs;
    private final String negotiated;

    private GrpcBenchClient(ManagedChannel[] channels, String negotiated) {
        this.channels = channels;
        this.negotiated = negotiated;
        this.stubs = new BenchServiceGrpc.BenchServiceStub[channels.length];
        for (int i = 0; i < channels.length; i++) {
            stubs[i] = BenchServiceGrpc.newStub(channels[i]);
        }
    }

    /** Stock grpc-java over Netty (plaintext HTTP/2), default settings apart from message size and executor. */
    static GrpcBenchClient connectNetty(ClientSettings s) {
        return connect("grpc-netty", "h2", () -> NettyChannelBuilder.forAddress(s.host(), s.port()).usePlaintext(), s);
    }

    /** grpc-java over rdmarpc ({@code dev.rdmarpc.grpc.RdmaChannelBuilder}). */
    static GrpcBenchClient connectCompat(ClientSettings s) {
        return connect("grpc-compat", "rdmarpc", () -> RdmaChannelBuilder.forAddress(s.host(), s.port()), s);
    }

    private static GrpcBenchClient connect(String name, String negotiated, Supplier<ManagedChannelBuilder<?>> builders,
                                           ClientSettings s) {
        ManagedChannel[] channels = new ManagedChannel[s.connections()];
        try {
            for (int i = 0; i < channels.length; i++) {
                ManagedChannelBuilder<?> b = builders.get().maxInboundMessageSize(s.maxMessage());
                if (s.directExecutor()) {
                    b.directExecutor();
                }
                channels[i] = b.build();
                BenchServiceGrpc.newBlockingStub(channels[i])
                        .withDeadlineAfter(s.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)
                        .unary(BenchRequest.newBuilder().setPayload(Payloads.of(1)).build());
            }
            return new GrpcBenchClient(channels, negotiated);
        } catch (StatusRuntimeException e) {
            closeAll(channels);
            throw new BenchException(BenchException.FAILED, name + ": first call to " + s.target() + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(channels);
            throw e;
        }
    }

    private static void closeAll(ManagedChannel[] channels) {
        for (ManagedChannel c : channels) {
            if (c != null) {
                c.shutdownNow();
            }
        }
    }

    @Override
    public String negotiated() {
        return negotiated;
    }

    @Override
    public Lane newLane(int index, Workload workload, LaneListener listener) {
        BenchServiceGrpc.BenchServiceStub stub = stubs[index % stubs.length];
        BenchRequest request = workload.request();
        return workload.kind() == CallKind.BIDI
                ? new BidiLane(stub, request, listener)
                : new CallLane(stub, request, workload.kind() == CallKind.SERVER_STREAM, listener);
    }

    @Override
    public void close() {
        for (ManagedChannel c : channels) {
            c.shutdown();
        }
        for (ManagedChannel c : channels) {
            try {
                if (!c.awaitTermination(5, TimeUnit.SECONDS)) {
                    c.shutdownNow();
                }
            } catch (InterruptedException e) {
                c.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Unary or server-stream calls; reuses one observer while it is idle (always, in closed mode). */
    private static final class CallLane implements Lane {
        private final BenchServiceGrpc.BenchServiceStub stub;
        private final BenchRequest request;
        private final boolean stream;
        private final LaneListener listener;
        private final Observer cached = new Observer(true);

        CallLane(BenchServiceGrpc.BenchServiceStub stub, BenchRequest request, boolean stream, LaneListener listener) {
            this.stub = stub;
            this.request = request;
            this.stream = stream;
            this.listener = listener;
        }

        @Override
        public void call(long startNanos) {
            Observer o = cached.busy.compareAndSet(false, true) ? cached : new Observer(false);
            o.start = startNanos;
            try {
                if (stream) {
                    stub.serverStream(request, o);
                } else {
                    stub.unary(request, o);
                }
            } catch (RuntimeException e) {
                o.onError(e);
            }
        }

        @Override
        public void close() {
            // calls are independent: nothing to end
        }

        private final class Observer implements StreamObserver<BenchResponse> {
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
    private static final class BidiLane extends OrderedLane implements StreamObserver<BenchResponse> {
        private final BenchRequest request;
        private final StreamObserver<BenchRequest> requests;

        BidiLane(BenchServiceGrpc.BenchServiceStub stub, BenchRequest request, LaneListener listener) {
            super(listener);
            this.request = request;
            this.requests = stub.bidi(this);
        }

        @Override
        protected void sendOne() {
            requests.onNext(request);
        }

        @Override
        protected void halfClose() {
            requests.onCompleted();
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
