package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.TestServiceGrpc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.google.common.util.concurrent.ListenableFuture;

/**
 * One {@link RdmaServerBuilder} server, two clients at the same time: an rdmarpc client ({@link RdmaChannelBuilder},
 * forced to RDMA) whose connection is upgraded to an RDMA queue pair, and a stock grpc-java client
 * ({@code NettyChannelBuilder}, cleartext HTTP/2 with prior knowledge) on the same port. Each gets its own answers;
 * the server saw every call of the first on "rdma" and every call of the second on "h2", and the rdmarpc client's calls
 * went over RDMA on its side too. A first call from each is held by the server until the other's has arrived, so both
 * clients are proved in flight at once; then both make calls of 64 B and 64 KiB (a rendezvous READ on RDMA), several in
 * flight, interleaved.
 */
@Tag("rdma")
@ExtendWith(SlabLeakCheck.class)
class MixedProtocolsOverRdmaTest {
    private static final Metadata.Key<String> CLIENT = Metadata.Key.of("x-client", Metadata.ASCII_STRING_MARSHALLER);
    private static final String HOLD = "hold";
    private static final int CALLS = 40;
    private static final int IN_FLIGHT = 8;

    /** Transports the server saw, by the calling client's name. */
    private final Map<String, Set<String>> seenByServer = new ConcurrentHashMap<>();
    /** Transports the rdmarpc client's calls saw on its side. */
    private final Set<String> seenByRdmaClient = ConcurrentHashMap.newKeySet();
    /** Held calls: answered together once both clients' are here. Guarded by itself. */
    private final List<Runnable> held = new ArrayList<>();
    private Server server;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    private static long timeoutMillis() {
        return (long) (60_000 * Math.max(1.0, Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1"))));
    }

    @Test
    void anRdmaClientAndAnH2ClientCallOneServerAtTheSameTime() throws Exception {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                seenByServer.computeIfAbsent(String.valueOf(headers.get(CLIENT)), k -> ConcurrentHashMap.newKeySet())
                        .add(String.valueOf(call.getAttributes().get(RdmaAttributes.TRANSPORT)));
                return next.startCall(call, headers);
            }
        };
        server = RdmaServerBuilder.forPort(0)
                .handshakeTimeout(timeoutMillis(), TimeUnit.MILLISECONDS) // a queue pair in an emulated guest
                .addService(ServerInterceptors.intercept(new TestServiceGrpc.TestServiceImplBase() {
                    @Override
                    public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> response) {
                        if (request.getPayload().getBody().toStringUtf8().startsWith(HOLD)) {
                            hold(request, response);
                            return;
                        }
                        response.onNext(SimpleResponse.newBuilder().setPayload(request.getPayload()).build());
                        response.onCompleted();
                    }
                }, recorder)).build().start();

        ManagedChannel rdma = RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.RDMA).connectTimeout(timeoutMillis(), TimeUnit.MILLISECONDS)
                .intercept(new CallAttributesRecorder(a -> seenByRdmaClient.add(String.valueOf(a.get(RdmaAttributes.TRANSPORT)))))
                .build();
        channels.add(rdma);
        ManagedChannel h2 = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
        channels.add(h2);
        TestServiceGrpc.TestServiceFutureStub rdmaStub = stub(rdma, "rdma-client");
        TestServiceGrpc.TestServiceFutureStub h2Stub = stub(h2, "h2-client");

        // one call from each, both held by the server until the other's is there
        ListenableFuture<SimpleResponse> heldRdma = rdmaStub.unaryCall(request(HOLD + "-rdma", 0));
        ListenableFuture<SimpleResponse> heldH2 = h2Stub.unaryCall(request(HOLD + "-h2", 0));
        assertEquals(HOLD + "-rdma", body(heldRdma.get(timeoutMillis(), TimeUnit.MILLISECONDS)));
        assertEquals(HOLD + "-h2", body(heldH2.get(timeoutMillis(), TimeUnit.MILLISECONDS)));

        // then both clients' calls interleaved, several in flight on each, each checked against its own request
        List<ListenableFuture<SimpleResponse>> rdmaCalls = new ArrayList<>();
        List<ListenableFuture<SimpleResponse>> h2Calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            int pad = i % 2 == 0 ? 0 : 64 << 10;
            rdmaCalls.add(rdmaStub.unaryCall(request("rdma-" + i, pad)));
            h2Calls.add(h2Stub.unaryCall(request("h2-" + i, pad)));
            if (rdmaCalls.size() >= IN_FLIGHT) {
                check(rdmaCalls, i + 1 - IN_FLIGHT, "rdma-");
                check(h2Calls, i + 1 - IN_FLIGHT, "h2-");
            }
        }
        for (int i = CALLS - IN_FLIGHT + 1; i < CALLS; i++) {
            check(rdmaCalls, i, "rdma-");
            check(h2Calls, i, "h2-");
        }

        assertEquals(Set.of("rdma"), seenByServer.get("rdma-client"), "the server's side of the rdmarpc client's calls");
        assertEquals(Set.of("h2"), seenByServer.get("h2-client"), "the server's side of the stock grpc-java client's calls");
        assertEquals(Set.of("rdma"), seenByRdmaClient, "the rdmarpc client's side of its calls");
    }

    /** Holds a call until the other client's held call is here too, then answers both (no thread waits). */
    private void hold(SimpleRequest request, StreamObserver<SimpleResponse> response) {
        List<Runnable> answers = new ArrayList<>();
        synchronized (held) {
            held.add(() -> {
                response.onNext(SimpleResponse.newBuilder().setPayload(request.getPayload()).build());
                response.onCompleted();
            });
            if (held.size() == 2) {
                answers.addAll(held);
            }
        }
        answers.forEach(Runnable::run);
    }

    private static TestServiceGrpc.TestServiceFutureStub stub(ManagedChannel channel, String name) {
        Metadata headers = new Metadata();
        headers.put(CLIENT, name);
        return TestServiceGrpc.newFutureStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                .withDeadlineAfter(timeoutMillis(), TimeUnit.MILLISECONDS);
    }

    /** A request whose payload is {@code text} followed by {@code pad} bytes. */
    private static SimpleRequest request(String text, int pad) {
        byte[] bytes = new byte[text.length() + pad];
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(t, 0, bytes, 0, t.length);
        for (int i = t.length; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 31 + text.hashCode());
        }
        return SimpleRequest.newBuilder().setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(bytes))).build();
    }

    private static String body(SimpleResponse r) {
        return r.getPayload().getBody().toStringUtf8();
    }

    /** Call {@code i} of {@code calls} answered its own request, byte for byte. */
    private static void check(List<ListenableFuture<SimpleResponse>> calls, int i, String prefix) throws Exception {
        SimpleResponse r = calls.get(i).get(timeoutMillis(), TimeUnit.MILLISECONDS);
        SimpleRequest expected = request(prefix + i, i % 2 == 0 ? 0 : 64 << 10);
        assertEquals(expected.getPayload().getBody().size(), r.getPayload().getBody().size(), prefix + i + ": its size");
        assertTrue(expected.getPayload().getBody().equals(r.getPayload().getBody()), prefix + i + ": its own bytes");
    }
}
