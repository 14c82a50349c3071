package dev.rdmarpc.samples;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.ForwardingServerCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.grpc.RdmaServerBuilder;
import dev.rdmarpc.health.HealthService;
import dev.rdmarpc.health.v1.HealthCheckRequest;
import dev.rdmarpc.health.v1.HealthCheckResponse;
import dev.rdmarpc.samples.grpc.GreeterService;
import dev.rdmarpc.samples.grpc.greeter.GreeterGrpc;
import dev.rdmarpc.samples.grpc.greeter.HelloReply;
import dev.rdmarpc.samples.grpc.greeter.HelloRequest;
import dev.rdmarpc.samples.kv.GetRequest;
import dev.rdmarpc.samples.kv.KeyValueGrpc;
import dev.rdmarpc.samples.kv.KeyValuePair;
import dev.rdmarpc.samples.kv.KeyValueStore;
import dev.rdmarpc.samples.kv.KvServer;
import dev.rdmarpc.samples.kv.PutRequest;
import dev.rdmarpc.samples.kv.ScanRequest;
import dev.rdmarpc.samples.kv.WatchRequest;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stock grpc-java clients ({@code NettyChannelBuilder}, cleartext HTTP/2) calling the sample servers on their rdmarpc
 * ports: the native KV server (an {@link RpcServer} with the health service) and the Greeter server
 * ({@link RdmaServerBuilder}). Unary, server and client streaming, errors, deadlines, metadata both ways, a 4 MiB
 * value, health Check.
 */
class StockGrpcClientsTest {
    static final io.grpc.Metadata.Key<String> REQUEST_ID = io.grpc.Metadata.Key.of("x-request-id", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    static final io.grpc.Metadata.Key<byte[]> TRACE = io.grpc.Metadata.Key.of("x-trace-bin", io.grpc.Metadata.BINARY_BYTE_MARSHALLER);
    /** The health service's Check as grpc-java calls it, with the messages of this project's own health.proto. */
    static final MethodDescriptor<HealthCheckRequest, HealthCheckResponse> CHECK = MethodDescriptor.<HealthCheckRequest, HealthCheckResponse>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("grpc.health.v1.Health/Check")
            .setRequestMarshaller(ProtoUtils.marshaller(HealthCheckRequest.getDefaultInstance()))
            .setResponseMarshaller(ProtoUtils.marshaller(HealthCheckResponse.getDefaultInstance()))
            .build();

    private long baseline;
    private RpcServer kvServer;
    private Server greeterServer;
    private ManagedChannel kvChannel;
    private ManagedChannel greeterChannel;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        kvServer = KvServer.builder(0, new KeyValueStore(), new HealthService(), KvServer.DEFAULT_MAX_MESSAGE_MIB).intercept(new EchoMetadata()).build().start();
        greeterServer = RdmaServerBuilder.forPort(0).addService(new GreeterService()).build().start();
        kvChannel = stockChannel(kvServer.getPort());
        greeterChannel = stockChannel(greeterServer.getPort());
    }

    static ManagedChannel stockChannel(int port) {
        return NettyChannelBuilder.forAddress("127.0.0.1", port).negotiationType(NegotiationType.PLAINTEXT)
                .maxInboundMessageSize(64 << 20).build();
    }

    @AfterEach
    void stop() throws Exception {
        kvChannel.shutdownNow();
        greeterChannel.shutdownNow();
        kvChannel.awaitTermination(60, TimeUnit.SECONDS);
        greeterChannel.awaitTermination(60, TimeUnit.SECONDS);
        kvServer.shutdownNow();
        kvServer.awaitTermination(60, TimeUnit.SECONDS);
        greeterServer.shutdownNow();
        greeterServer.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    private KeyValueGrpc.KeyValueBlockingStub kv() {
        return KeyValueGrpc.newBlockingStub(kvChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    private static ByteString bytes(String s) {
        return ByteString.copyFromUtf8(s);
    }

    @Test
    void unaryCallsAndAnErrorStatusOnTheNativeServer() {
        assertEquals(1, kv().put(PutRequest.newBuilder().setKey(bytes("a")).setValue(bytes("1")).build()).getVersion());
        assertEquals(bytes("1"), kv().get(GetRequest.newBuilder().setKey(bytes("a")).build()).getValue());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> kv().get(GetRequest.newBuilder().setKey(bytes("none")).build()));
        assertEquals(io.grpc.Status.Code.NOT_FOUND, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription() != null && !e.getStatus().getDescription().isEmpty(), e.getStatus().toString());
    }

    @Test
    void aFourMebibyteValueBothWays() {
        byte[] big = new byte[4 << 20];
        new Random(4).nextBytes(big);
        kv().put(PutRequest.newBuilder().setKey(bytes("big")).setValue(ByteString.copyFrom(big)).build());
        assertArrayEquals(big, kv().get(GetRequest.newBuilder().setKey(bytes("big")).build()).getValue().toByteArray());
    }

    @Test
    void serverAndClientStreaming() throws Exception {
        CompletableFuture<Long> count = new CompletableFuture<>();
        StreamObserver<PutRequest> puts = KeyValueGrpc.newStub(kvChannel).withDeadlineAfter(60, TimeUnit.SECONDS).batchPut(new StreamObserver<>() {
            @Override
            public void onNext(dev.rdmarpc.samples.kv.BatchPutResponse value) {
                count.complete(value.getCount());
            }

            @Override
            public void onError(Throwable t) {
                count.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        for (int i = 0; i < 100; i++) {
            puts.onNext(PutRequest.newBuilder().setKey(bytes(String.format("k%03d", i))).setValue(bytes("v" + i)).build());
        }
        puts.onCompleted();
        assertEquals(100, count.get(60, TimeUnit.SECONDS));
        List<String> keys = new ArrayList<>();
        Iterator<KeyValuePair> it = kv().scan(ScanRequest.newBuilder().setStart(bytes("k010")).setEnd(bytes("k020")).build());
        it.forEachRemaining(p -> keys.add(p.getKey().toStringUtf8()));
        assertEquals(10, keys.size(), keys.toString());
        assertEquals("k010", keys.get(0));
        assertEquals("k019", keys.get(9));
    }

    @Test
    void aCallPastItsDeadlineEndsWithDeadlineExceeded() throws Exception {
        // Watch never ends on its own: only the deadline (sent as grpc-timeout) ends it
        CompletableFuture<Throwable> end = new CompletableFuture<>();
        StreamObserver<WatchRequest> requests = KeyValueGrpc.newStub(kvChannel).withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                .watch(new StreamObserver<>() {
                    @Override
                    public void onNext(dev.rdmarpc.samples.kv.WatchEvent value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        end.complete(t);
                    }

                    @Override
                    public void onCompleted() {
                        end.complete(null);
                    }
                });
        requests.onNext(WatchRequest.getDefaultInstance());
        Throwable t = end.get(60, TimeUnit.SECONDS);
        assertEquals(io.grpc.Status.Code.DEADLINE_EXCEEDED, io.grpc.Status.fromThrowable(t).getCode(), String.valueOf(t));
    }

    @Test
    void metadataBothWays() {
        io.grpc.Metadata out = new io.grpc.Metadata();
        out.put(REQUEST_ID, "req-42");
        byte[] trace = {0, 1, 2, (byte) 0xff, 'x'};
        out.put(TRACE, trace);
        AtomicReference<io.grpc.Metadata> headers = new AtomicReference<>();
        AtomicReference<io.grpc.Metadata> trailers = new AtomicReference<>();
        kv().withInterceptors(MetadataUtils.newAttachHeadersInterceptor(out), MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                .put(PutRequest.newBuilder().setKey(bytes("m")).build());
        assertEquals("req-42", headers.get().get(REQUEST_ID), "an ASCII request header comes back as a response header");
        assertArrayEquals(trace, trailers.get().get(TRACE), "a binary request header comes back as a trailer");
    }

    @Test
    void healthCheckOfTheNativeServer() {
        HealthCheckResponse r = ClientCalls.blockingUnaryCall(kvChannel, CHECK, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS),
                HealthCheckRequest.getDefaultInstance());
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, r.getStatus());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(kvChannel, CHECK,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), HealthCheckRequest.newBuilder().setService("nope").build()));
        assertEquals(io.grpc.Status.Code.NOT_FOUND, e.getStatus().getCode());
    }

    @Test
    void greeterOnRdmaServerBuilder() {
        GreeterGrpc.GreeterBlockingStub greeter = GreeterGrpc.newBlockingStub(greeterChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertEquals("Hello h2", greeter.sayHello(HelloRequest.newBuilder().setName("h2").build()).getMessage());
        List<HelloReply> replies = new ArrayList<>();
        greeter.sayHelloAgain(HelloRequest.newBuilder().setName("h2").setTimes(5).build()).forEachRemaining(replies::add);
        assertEquals(5, replies.size());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> greeter.sayHelloAgain(HelloRequest.newBuilder().setTimes(-1).build()).hasNext());
        assertEquals(io.grpc.Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("times must be 0..1000", e.getStatus().getDescription());
    }

    /** Echoes x-request-id as a response header and x-trace-bin as a trailer. */
    static final class EchoMetadata implements ServerInterceptor {
        static final Metadata.Key<String> ID = Metadata.Key.ascii("x-request-id");
        static final Metadata.Key<byte[]> TRACE_BIN = Metadata.Key.binary("x-trace-bin");

        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                     ServerCallHandler<ReqT, RespT> next) {
            String id = headers.get(ID);
            byte[] trace = headers.get(TRACE_BIN);
            return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata h) {
                    if (id != null) {
                        h.put(ID, id);
                    }
                    super.sendHeaders(h);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    if (trace != null) {
                        trailers.put(TRACE_BIN, trace);
                    }
                    super.close(status, trailers);
                }
            }, headers);
        }
    }
}
