package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.BenchException;
import dev.rdmarpc.bench.CallKind;
import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TransportMode;

import java.util.concurrent.atomic.AtomicBoolean;

/** The benchmark client on rdmarpc's native API: generated async stubs over {@link RpcChannel}s. */
final class NativeBenchClient implements BenchClient {
    private final RpcChannel[] channels;
    private final BenchServiceRpc.BenchServiceStub[] stubs;

    private NativeBenchClient(RpcChannel[] channels) {
        this.channels = channels;
        this.stubs = new BenchServiceRpc.BenchServiceStub[channels.length];
        for (int i = 0; i < channels.length; i++) {
            stubs[i] = BenchServiceRpc.newStub(channels[i]);
        }
    }

    static NativeBenchClient connect(String name, TransportMode mode, ClientSettings s) {
        RpcChannel[] channels = new RpcChannel[s.connections()];
        try {
            for (int i = 0; i < channels.length; i++) {
                RpcChannel.Builder b = RpcChannel.forAddress(s.host(), s.port())
                        .transportMode(mode)
                        .maxInboundMessageSize(s.maxMessage())
                        .connectTimeout(s.connectTimeout());
                if (s.directExecutor()) {
                    b.directExecutor();
                }
                channels[i] = b.build();
                BenchServiceRpc.newBlockingStub(channels[i]).withDeadlineAfter(s.connectTimeout())
                        .unary(BenchRequest.newBuilder().setPayload(Payloads.of(1)).build());
            }
            return new NativeBenchClient(channels);
        } catch (StatusException e) {
            closeAll(channels);
            throw new BenchException(BenchException.FAILED, name + ": first call to " + s.target() + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(channels);
            throw e;
        }
    }

    private static void closeAll(RpcChannel[] channels) {
        for (RpcChannel c : channels) {
            if (c != null) {
                c.shutdownNow();
            }
        }
    }

    @Override
    public String negotiated() {
        String t = channels[0].currentTransport();
        return t == null ? "?" : t;
    }

    @Override
    public Lane newLane(int index, Workload workload, LaneListener listener) {
        BenchServiceRpc.BenchServiceStub stub = stubs[index % stubs.length];
        BenchRequest request = workload.request();
        return workload.kind() == CallKind.BIDI
                ? new BidiLane(stub, request, listener)
                : new CallLane(stub, request, workload.kind() == CallKind.SERVER_STREAM, listener);
    }

    @Override
    public void close() {
        for (RpcChannel c : channels) {
            c.close();
        }
    }

    /** Unary or server-stream calls; reuses one observer while it is idle (always, in closed mode). */
    private static final class CallLane implements Lane {
        private final BenchServiceRpc.BenchServiceStub stub;
        private final BenchRequest request;
        private final boolean stream;
        private final LaneListener listener;
        private final Observer cached = new Observer(true);

        CallLane(BenchServiceRpc.BenchServiceStub stub, BenchRequest request, boolean stream, LaneListener listener) {
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

        BidiLane(BenchServiceRpc.BenchServiceStub stub, BenchRequest request, LaneListener listener) {
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
