package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.bench.driver.Payloads;
import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceGrpc;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A whole unary call over loopback TCP, client and server in this JVM (so {@code -prof gc} counts
 * both sides' allocation): rdmarpc's native API and grpc-java over rdmarpc (grpc-compat) against stock
 * grpc-java, blocking stubs and async stubs with a reused observer, handlers and callbacks on the I/O threads. {@link #userMessagesOnly}
 * is the allocation a call cannot avoid (parse the request, build the response, parse the
 * response); what a call allocates beyond it is the framework's. The server-streaming methods count one operation per
 * response message ({@value #STREAM_MESSAGES} per call, from a response built once), beside
 * {@link #streamMessageOnly}, the parse each of them costs.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xms1g", "-Xmx1g"})
public class UnaryCallBenchmark {

    /** Response messages of one server-streaming call. */
    static final int STREAM_MESSAGES = 100;

    /** Payload bytes of request and response. */
    @Param({"64"})
    public int payload;

    private RpcServer nativeServer;
    private RpcChannel nativeChannel;
    private BenchServiceRpc.BenchServiceBlockingStub nativeBlocking;
    private BenchServiceRpc.BenchServiceStub nativeAsync;
    private Server grpcServer;
    private ManagedChannel grpcChannel;
    private BenchServiceGrpc.BenchServiceBlockingStub grpcBlocking;
    private BenchServiceGrpc.BenchServiceStub grpcAsync;
    private Server compatServer;
    private ManagedChannel compatChannel;
    private BenchServiceGrpc.BenchServiceStub compatAsync;
    private ManagedChannel stockToRdmarpcChannel;
    private BenchServiceGrpc.BenchServiceStub stockToRdmarpcAsync;
    private ManagedChannel compatToStockChannel;
    private BenchServiceGrpc.BenchServiceStub compatToStockAsync;
    private BenchRequest request;
    private BenchRequest streamRequest;
    private final Waiter nativeWaiter = new Waiter();
    private final Waiter grpcWaiter = new Waiter();
    private final Waiter compatWaiter = new Waiter();
    private final Waiter stockToRdmarpcWaiter = new Waiter();
    private final Waiter compatToStockWaiter = new Waiter();

    private final SlabPool pool = new SlabPool(16L << 20, false);
    private final ProtoMarshaller<BenchRequest> requestMarshaller = ProtoMarshaller.of(BenchRequest.getDefaultInstance());
    private final ProtoMarshaller<BenchResponse> responseMarshaller = ProtoMarshaller.of(BenchResponse.getDefaultInstance());
    private SlabBuffer requestBytes;
    private SlabBuffer responseBytes;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        request = BenchRequest.newBuilder().setPayload(Payloads.of(payload)).build();
        streamRequest = BenchRequest.newBuilder().setResponseSize(payload).setResponseCount(STREAM_MESSAGES).build();
        BenchResponse streamed = BenchResponse.newBuilder().setPayload(Payloads.of(payload)).build();

        nativeServer = RpcServer.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                .addService(new EchoNative(streamed)).directExecutor().build().start();
        nativeChannel = RpcChannel.forAddress("127.0.0.1", nativeServer.getPort()).transportMode(TransportMode.TCP)
                .directExecutor().build();
        nativeBlocking = BenchServiceRpc.newBlockingStub(nativeChannel);
        nativeAsync = BenchServiceRpc.newStub(nativeChannel);
        nativeBlocking.unary(request);

        grpcServer = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(new EchoGrpc(streamed))
                .directExecutor().build().start();
        grpcChannel = NettyChannelBuilder.forAddress("127.0.0.1", grpcServer.getPort()).usePlaintext().directExecutor().build();
        grpcBlocking = BenchServiceGrpc.newBlockingStub(grpcChannel);
        grpcAsync = BenchServiceGrpc.newStub(grpcChannel);
        grpcBlocking.unary(request);

        compatServer = dev.rdmarpc.grpc.RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new EchoGrpc(streamed)).directExecutor().build().start();
        compatChannel = dev.rdmarpc.grpc.RdmaChannelBuilder.forAddress("127.0.0.1", compatServer.getPort())
                .directExecutor().build();
        compatAsync = BenchServiceGrpc.newStub(compatChannel);
        BenchServiceGrpc.newBlockingStub(compatChannel).unary(request);

        // the HTTP/2 pairings: a stock client to rdmarpc's server (same port), grpc-compat's channel to a stock server
        stockToRdmarpcChannel = NettyChannelBuilder.forAddress("127.0.0.1", nativeServer.getPort()).usePlaintext()
                .directExecutor().build();
        stockToRdmarpcAsync = BenchServiceGrpc.newStub(stockToRdmarpcChannel);
        BenchServiceGrpc.newBlockingStub(stockToRdmarpcChannel).unary(request);
        compatToStockChannel = dev.rdmarpc.grpc.RdmaChannelBuilder.forAddress("127.0.0.1", grpcServer.getPort())
                .directExecutor().build();
        compatToStockAsync = BenchServiceGrpc.newStub(compatToStockChannel);
        BenchServiceGrpc.newBlockingStub(compatToStockChannel).unary(request);

        requestBytes = serialize(requestMarshaller, request);
        responseBytes = serialize(responseMarshaller, BenchResponse.newBuilder().setPayload(request.getPayload()).build());
    }

    private <T extends com.google.protobuf.MessageLite> SlabBuffer serialize(ProtoMarshaller<T> m, T value) {
        int size = m.serializedSize(value);
        SlabBuffer b = pool.allocate(size);
        m.write(value, b.segment().asSlice(0, size));
        b.setLength(size);
        return b;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        stockToRdmarpcChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        compatToStockChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        nativeChannel.close();
        nativeServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        grpcChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        grpcServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        compatChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        compatServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        requestBytes.release();
        responseBytes.release();
    }

    /** rdmarpc, generated blocking stub. */
    @Benchmark
    public BenchResponse nativeBlockingUnary() {
        return nativeBlocking.unary(request);
    }

    /** rdmarpc, generated async stub with a reused observer (no harness allocation). */
    @Benchmark
    public Object nativeAsyncUnary() {
        Waiter w = nativeWaiter;
        w.arm();
        nativeAsync.unary(request, w);
        return w.await();
    }

    /** grpc-java over Netty, generated blocking stub. */
    @Benchmark
    public BenchResponse grpcNettyBlockingUnary() {
        return grpcBlocking.unary(request);
    }

    /** grpc-java over Netty, generated async stub with a reused observer. */
    @Benchmark
    public Object grpcNettyAsyncUnary() {
        Waiter w = grpcWaiter;
        w.arm();
        grpcAsync.unary(request, w);
        return w.await();
    }

    /** grpc-java over rdmarpc (grpc-compat's builders, TCP here), generated async stub with a reused observer. */
    @Benchmark
    public Object grpcCompatAsyncUnary() {
        Waiter w = compatWaiter;
        w.arm();
        compatAsync.unary(request, w);
        return w.await();
    }

    /** A stock grpc-java client (grpc-netty) calling rdmarpc's server over HTTP/2, generated async stub. */
    @Benchmark
    public Object stockClientToRdmarpcServerAsyncUnary() {
        Waiter w = stockToRdmarpcWaiter;
        w.arm();
        stockToRdmarpcAsync.unary(request, w);
        return w.await();
    }

    /** grpc-compat's channel calling a stock grpc-java server (grpc-netty) over HTTP/2, generated async stub. */
    @Benchmark
    public Object compatClientToStockServerAsyncUnary() {
        Waiter w = compatToStockWaiter;
        w.arm();
        compatToStockAsync.unary(request, w);
        return w.await();
    }

    /** rdmarpc, generated async stub: one server-streaming call of {@value #STREAM_MESSAGES} responses; per message. */
    @Benchmark
    @OperationsPerInvocation(STREAM_MESSAGES)
    public Object nativeServerStreaming() {
        Waiter w = nativeWaiter;
        w.arm();
        nativeAsync.serverStream(streamRequest, w);
        return w.await();
    }

    /** grpc-java over Netty: one server-streaming call of {@value #STREAM_MESSAGES} responses; per message. */
    @Benchmark
    @OperationsPerInvocation(STREAM_MESSAGES)
    public Object grpcNettyServerStreaming() {
        Waiter w = grpcWaiter;
        w.arm();
        grpcAsync.serverStream(streamRequest, w);
        return w.await();
    }

    /** grpc-java over rdmarpc (grpc-compat): one server-streaming call of {@value #STREAM_MESSAGES} responses; per message. */
    @Benchmark
    @OperationsPerInvocation(STREAM_MESSAGES)
    public Object grpcCompatServerStreaming() {
        Waiter w = compatWaiter;
        w.arm();
        compatAsync.serverStream(streamRequest, w);
        return w.await();
    }

    /** The message's own work in one streamed response: parse it (the server sends a response built once). */
    @Benchmark
    public BenchResponse streamMessageOnly() {
        return responseMarshaller.parse(responseBytes.segment().asSlice(0, responseBytes.length()));
    }

    /** The messages' own work in one call: parse the request, build the response, parse the response. */
    @Benchmark
    public BenchResponse userMessagesOnly() {
        MemorySegment reqSeg = requestBytes.segment().asSlice(0, requestBytes.length());
        BenchRequest req = requestMarshaller.parse(reqSeg);
        BenchResponse built = BenchResponse.newBuilder().setPayload(req.getPayload()).build();
        MemorySegment respSeg = responseBytes.segment().asSlice(0, responseBytes.length());
        BenchResponse parsed = responseMarshaller.parse(respSeg);
        return parsed.getSerializedSize() == built.getSerializedSize() ? parsed : built;
    }

    /**
     * Completion of one async call, parked on by the benchmark thread; reused for every call. It is an
     * observer of both APIs at once (their {@code StreamObserver}s have the same three methods).
     */
    private static final class Waiter implements dev.rdmarpc.core.StreamObserver<BenchResponse>,
            io.grpc.stub.StreamObserver<BenchResponse> {
        private volatile Thread thread;
        private volatile Object result;
        private BenchResponse value;

        void arm() {
            result = null;
            thread = Thread.currentThread();
        }

        Object await() {
            Object r;
            while ((r = result) == null) {
                LockSupport.park(this);
            }
            if (r instanceof Throwable t) {
                throw new IllegalStateException("call failed", t);
            }
            return r;
        }

        private void complete(Object r) {
            result = r;
            LockSupport.unpark(thread);
        }

        @Override
        public void onNext(BenchResponse v) {
            value = v;
        }

        @Override
        public void onError(Throwable t) {
            complete(t);
        }

        @Override
        public void onCompleted() {
            complete(value);
        }
    }

    /** Echo on rdmarpc's API; a server stream repeats one response built beforehand. */
    static final class EchoNative extends BenchServiceRpc.BenchServiceImplBase {
        private final BenchResponse streamed;

        EchoNative(BenchResponse streamed) {
            this.streamed = streamed;
        }

        @Override
        public void serverStream(BenchRequest req, dev.rdmarpc.core.StreamObserver<BenchResponse> out) {
            for (int i = 0; i < req.getResponseCount(); i++) {
                out.onNext(streamed);
            }
            out.onCompleted();
        }

        @Override
        public void unary(BenchRequest req, dev.rdmarpc.core.StreamObserver<BenchResponse> out) {
            out.onNext(BenchResponse.newBuilder().setPayload(req.getPayload()).build());
            out.onCompleted();
        }
    }

    /** Echo on grpc-java's API; a server stream repeats one response built beforehand. */
    static final class EchoGrpc extends BenchServiceGrpc.BenchServiceImplBase {
        private final BenchResponse streamed;

        EchoGrpc(BenchResponse streamed) {
            this.streamed = streamed;
        }

        @Override
        public void serverStream(BenchRequest req, io.grpc.stub.StreamObserver<BenchResponse> out) {
            for (int i = 0; i < req.getResponseCount(); i++) {
                out.onNext(streamed);
            }
            out.onCompleted();
        }

        @Override
        public void unary(BenchRequest req, io.grpc.stub.StreamObserver<BenchResponse> out) {
            out.onNext(BenchResponse.newBuilder().setPayload(req.getPayload()).build());
            out.onCompleted();
        }
    }
}
