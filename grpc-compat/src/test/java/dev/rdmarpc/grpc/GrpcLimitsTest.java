package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** grpc's builder limits map onto rdmarpc's: concurrent calls per connection, and inbound metadata size both ways. */
@ExtendWith(SlabLeakCheck.class)
class GrpcLimitsTest {
    /** Bytes as they are, for methods of {@code byte[]}. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    private static final MethodDescriptor<byte[], byte[]> HOLD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("limits.Held/Hold")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final MethodDescriptor<byte[], byte[]> BIG_HEADERS = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("limits.Held/BigHeaders")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final Metadata.Key<String> BIG = Metadata.Key.of("x-big", Metadata.ASCII_STRING_MARSHALLER);

    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    private ServerServiceDefinition service() {
        return ServerServiceDefinition.builder("limits.Held")
                .addMethod(HOLD, ServerCalls.asyncUnaryCall((req, obs) -> {
                    calls.incrementAndGet();
                    peak.accumulateAndGet(active.incrementAndGet(), Math::max);
                    try {
                        if (!release.await(60, TimeUnit.SECONDS)) {
                            active.decrementAndGet();
                            obs.onError(Status.INTERNAL.withDescription("never released").asException());
                            return;
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    active.decrementAndGet(); // before the answer: the client's next call never meets this one counted
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(BIG_HEADERS, (ServerCall<byte[], byte[]> call, Metadata headers) -> {
                    Metadata out = new Metadata();
                    out.put(BIG, "v".repeat(600));
                    call.sendHeaders(out);
                    call.sendMessage(new byte[1]);
                    call.close(Status.OK, new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                })
                .build();
    }

    private void start(UnaryOperator<RdmaServerBuilder> s, UnaryOperator<RdmaChannelBuilder> c) throws IOException {
        server = s.apply(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                .addService(service())).build().start();
        channel = c.apply(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.TCP)).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        release.countDown();
        if (channel != null) {
            channel.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void maxConcurrentCallsPerConnectionHoldsTheCallsBeyondItUntilASlotFrees() throws Exception {
        start(s -> s.maxConcurrentCallsPerConnection(2), c -> c);
        List<com.google.common.util.concurrent.ListenableFuture<byte[]>> results = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            results.add(ClientCalls.futureUnaryCall(channel.newCall(HOLD, CallOptions.DEFAULT), new byte[]{(byte) i}));
        }
        Await.until(() -> calls.get() == 2, () -> "two calls at the server, not " + calls.get());
        release.countDown();
        for (int i = 0; i < results.size(); i++) {
            assertArrayEquals(new byte[]{(byte) i}, results.get(i).get(60, TimeUnit.SECONDS), "call " + i);
        }
        assertEquals(6, calls.get());
        assertEquals(2, peak.get(), "never more calls at once than the server allows");
    }

    @Test
    void theServersMaxInboundMetadataSizeIsAdvertisedAndTheClientRespectsIt() throws Exception {
        start(s -> s.maxInboundMetadataSize(1000), c -> c);
        Metadata big = new Metadata();
        big.put(BIG, "v".repeat(2000));
        io.grpc.Channel withBigHeaders = io.grpc.ClientInterceptors.intercept(channel,
                io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(big));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(withBigHeaders, HOLD, CallOptions.DEFAULT, new byte[1]));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("exceeds the 1000 bytes the server"), e.getStatus().getDescription());
        assertEquals(0, calls.get(), "the call was not sent");
    }

    @Test
    void theChannelsMaxInboundMetadataSizeKeepsLargerResponseHeadersFromBeingSent() throws Exception {
        start(s -> s, c -> c.maxInboundMetadataSize(300));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(channel, BIG_HEADERS, CallOptions.DEFAULT, new byte[1]));
        // the channel advertises its limit in HELLO: the server does not send larger headers and fails the call instead
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("exceed the 300 bytes the client accepts"), e.getStatus().getDescription());
    }
}
