package dev.rdmarpc.grpc;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.TransportMode;
import io.grpc.Codec;
import io.grpc.CompressorRegistry;
import io.grpc.DecompressorRegistry;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.testing.integration.Messages.BoolValue;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallResponse;
import io.grpc.testing.integration.TestServiceGrpc;
import io.grpc.testing.integration.TestServiceImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * grpc's per-message compression over rdmarpc on 127.0.0.1 with stock stubs and grpc's interop
 * TestService: grpc negotiates with grpc-encoding/grpc-accept-encoding, messages travel with
 * rdmarpc's COMPRESSED flag (counted on the wire by a {@link FrameProxy}), and the size limits and
 * failures are grpc's: where the outcome is not obvious the same scenario runs on grpc-netty too
 * and both must agree.
 */
@ExtendWith(SlabLeakCheck.class)
class CompressionTest {
    private static final int LIMIT = 64 * 1024;

    private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<FrameProxy> proxies = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            c.awaitTermination(60, TimeUnit.SECONDS);
        }
        for (FrameProxy p : proxies) {
            p.close();
        }
        for (Server s : servers) {
            s.shutdownNow();
            s.awaitTermination(60, TimeUnit.SECONDS);
        }
        executor.shutdownNow();
    }

    /** A grpc server and channel on one stack: rdmarpc (through a proxy that counts frames) or grpc-netty. */
    private enum Stack { RDMARPC, NETTY }

    private FrameProxy proxy;

    private TestServiceGrpc.TestServiceBlockingStub stub(Stack stack, UnaryOperator<ServerBuilder<?>> server,
                                                         UnaryOperator<ManagedChannelBuilder<?>> channel) throws IOException {
        ServerBuilder<?> sb = stack == Stack.RDMARPC
                ? RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                : NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
        Server s = server.apply(sb.addService(new TestServiceImpl(executor))).build().start();
        servers.add(s);
        ManagedChannelBuilder<?> cb;
        if (stack == Stack.RDMARPC) {
            proxy = new FrameProxy(s.getPort());
            proxies.add(proxy);
            cb = RdmaChannelBuilder.forAddress("127.0.0.1", proxy.port()).transportMode(TransportMode.TCP);
        } else {
            cb = NettyChannelBuilder.forAddress("127.0.0.1", s.getPort()).negotiationType(NegotiationType.PLAINTEXT);
        }
        ManagedChannel c = channel.apply(cb).build();
        channels.add(c);
        return TestServiceGrpc.newBlockingStub(c).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    private TestServiceGrpc.TestServiceBlockingStub stub() throws IOException {
        return stub(Stack.RDMARPC, b -> b, b -> b);
    }

    /** A request of {@code requestBytes} zeros asking for {@code responseBytes} zeros back, gzip or not. */
    static SimpleRequest request(int requestBytes, int responseBytes, boolean responseCompressed) {
        return SimpleRequest.newBuilder()
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[requestBytes])))
                .setResponseSize(responseBytes)
                .setResponseCompressed(BoolValue.newBuilder().setValue(responseCompressed))
                .build();
    }

    @Test
    void uncompressedByDefault() throws IOException {
        SimpleResponse r = stub().unaryCall(request(10_000, 10_000, false));
        assertEquals(10_000, r.getPayload().getBody().size());
        assertEquals(1, proxy.messagesToServer.get());
        assertEquals(1, proxy.messagesToClient.get());
        assertEquals(0, proxy.compressedToServer.get() + proxy.compressedToClient.get());
    }

    @Test
    void gzipBothWays() throws IOException {
        AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
        SimpleResponse r = stub().withCompression("gzip")
                .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, new AtomicReference<>()))
                .unaryCall(request(100_000, 100_000, true));
        assertEquals(100_000, r.getPayload().getBody().size());
        assertEquals(1, proxy.compressedToServer.get(), "the request travelled compressed");
        assertEquals(1, proxy.compressedToClient.get(), "the response travelled compressed");
        assertEquals("gzip", responseHeaders.get().get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)));
    }

    @Test
    void serverStreamingCompressionPerMessage() throws IOException {
        StreamingOutputCallRequest req = StreamingOutputCallRequest.newBuilder()
                .addResponseParameters(ResponseParameters.newBuilder().setSize(30_000)
                        .setCompressed(BoolValue.newBuilder().setValue(true)))
                .addResponseParameters(ResponseParameters.newBuilder().setSize(30_000)
                        .setCompressed(BoolValue.newBuilder().setValue(false)))
                .build();
        // gzip for the call, and grpc's per-message switch: on for even messages, off for odd ones
        ServerInterceptor gzip = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                call.setCompression("gzip");
                return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    private int sent;

                    @Override
                    public void sendMessage(R message) {
                        super.setMessageCompression(sent++ % 2 == 0);
                        super.sendMessage(message);
                    }
                }, headers);
            }
        };
        Iterator<StreamingOutputCallResponse> it = stub(Stack.RDMARPC, b -> b.intercept(gzip), b -> b).streamingOutputCall(req);
        assertEquals(30_000, it.next().getPayload().getBody().size());
        assertEquals(30_000, it.next().getPayload().getBody().size());
        assertTrue(!it.hasNext());
        // setMessageCompression(false) for the second message: only the first is flagged
        assertEquals(2, proxy.messagesToClient.get());
        assertEquals(1, proxy.compressedToClient.get());
    }

    @Test
    void aClientWithoutGzipNeverGetsGzip() throws IOException {
        AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
        DecompressorRegistry identityOnly = DecompressorRegistry.emptyInstance().with(Codec.Identity.NONE, false);
        SimpleResponse r = stub(Stack.RDMARPC, b -> b, b -> b.decompressorRegistry(identityOnly))
                .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, new AtomicReference<>()))
                .unaryCall(request(10, 50_000, true));
        assertEquals(50_000, r.getPayload().getBody().size());
        assertEquals(0, proxy.compressedToClient.get());
        assertEquals("identity", responseHeaders.get().get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)));
    }

    /** gzip under another name, which only the client knows. */
    private static final Codec CLIENT_ONLY = new Codec() {
        @Override
        public String getMessageEncoding() {
            return "x-client-only";
        }

        @Override
        public OutputStream compress(OutputStream os) throws IOException {
            return new GZIPOutputStream(os);
        }

        @Override
        public InputStream decompress(InputStream is) throws IOException {
            return new GZIPInputStream(is);
        }
    };

    @Test
    void anEncodingTheServerLacksIsUnimplemented() throws IOException {
        CompressorRegistry registry = CompressorRegistry.newEmptyInstance();
        registry.register(CLIENT_ONLY);
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> stub(Stack.RDMARPC, b -> b, b -> b.compressorRegistry(registry))
                        .withCompression("x-client-only").unaryCall(request(100, 10, false)));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), e.getStatus().toString());
        assertEquals("Can't find decompressor for x-client-only", e.getStatus().getDescription());
    }

    @Test
    void aFlaggedRequestWithoutAnEncodingIsInternal() throws IOException {
        // Only a non-grpc client can send this: a plain rdmarpc client that sets the COMPRESSED flag
        // without naming an encoding, so grpc's ServerImpl sets no decompressor.
        Server s = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                .addService(new TestServiceImpl(executor)).build().start();
        servers.add(s);
        dev.rdmarpc.core.Marshaller<byte[]> flagged = new dev.rdmarpc.core.Marshaller<>() {
            @Override
            public int serializedSize(byte[] value) {
                return value.length;
            }

            @Override
            public void write(byte[] value, java.lang.foreign.MemorySegment target) {
                target.copyFrom(java.lang.foreign.MemorySegment.ofArray(value));
            }

            @Override
            public byte[] parse(java.lang.foreign.MemorySegment source) {
                return source.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            }

            @Override
            public boolean isCompressed(byte[] value) {
                return true;
            }
        };
        dev.rdmarpc.core.MethodDescriptor<byte[], byte[]> unary = dev.rdmarpc.core.MethodDescriptor.create(
                "grpc.testing.TestService/UnaryCall", dev.rdmarpc.core.MethodDescriptor.MethodType.UNARY, flagged, flagged);
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            request(10, 10, false).writeTo(out);
        }
        dev.rdmarpc.core.RpcChannel core = dev.rdmarpc.core.RpcChannel.forAddress("127.0.0.1", s.getPort())
                .transportMode(TransportMode.TCP).build();
        try {
            RuntimeException e = assertThrows(RuntimeException.class, () -> dev.rdmarpc.core.ClientCalls.blockingUnaryCall(core, unary,
                    dev.rdmarpc.core.CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), gz.toByteArray()));
            dev.rdmarpc.core.Status status = dev.rdmarpc.core.Status.fromThrowable(e);
            assertEquals(dev.rdmarpc.core.Status.Code.INTERNAL, status.getCode(), status.toString());
            assertEquals("Can't decode compressed gRPC message as compression not configured", status.getDescription());
        } finally {
            core.shutdownNow();
        }
    }

    /** The request's status on each stack; rdmarpc's must be netty's. */
    private Status.Code requestOutcome(Stack stack, int requestBytes) throws IOException {
        try {
            stub(stack, b -> b.maxInboundMessageSize(LIMIT), b -> b).withCompression("gzip")
                    .unaryCall(request(requestBytes, 10, false));
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    private Status.Code responseOutcome(Stack stack, int responseBytes) throws IOException {
        try {
            stub(stack, b -> b, b -> b.maxInboundMessageSize(LIMIT)).unaryCall(request(10, responseBytes, true));
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    @Test
    void theServerLimitAppliesToTheDecompressedRequest() throws IOException {
        assertEquals(Status.Code.OK, requestOutcome(Stack.RDMARPC, LIMIT - 100));
        assertEquals(1, proxy.compressedToServer.get());
        // A few hundred bytes on the wire, over the limit once decompressed.
        Status.Code over = requestOutcome(Stack.RDMARPC, LIMIT + 1000);
        assertEquals(1, proxy.compressedToServer.get());
        assertNotEquals(Status.Code.OK, over);
        assertEquals(requestOutcome(Stack.NETTY, LIMIT + 1000), over, "as grpc-netty");
    }

    @Test
    void theChannelLimitAppliesToTheDecompressedResponse() throws IOException {
        assertEquals(Status.Code.OK, responseOutcome(Stack.RDMARPC, LIMIT - 100));
        assertEquals(1, proxy.compressedToClient.get());
        Status.Code over = responseOutcome(Stack.RDMARPC, LIMIT + 1000);
        assertEquals(1, proxy.compressedToClient.get());
        assertNotEquals(Status.Code.OK, over);
        assertEquals(responseOutcome(Stack.NETTY, LIMIT + 1000), over, "as grpc-netty");
    }
}
