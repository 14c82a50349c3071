package dev.rdmarpc.grpc;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.stub.MetadataUtils;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.TestServiceGrpc;
import io.grpc.testing.integration.TestServiceImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.rdmarpc.grpc.CompressionTest.request;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * gzip between the native API and grpc-java over rdmarpc: a grpc-java stub on {@link RdmaChannelBuilder} calls a
 * native {@link RpcServer} with {@code withCompression("gzip")}, and a native {@link RpcChannel} with
 * {@code CallOptions.withCompression("gzip")} calls grpc's interop TestService on {@link RdmaServerBuilder}. A
 * {@link FrameProxy} between them counts the messages that travel with the COMPRESSED flag.
 */
@ExtendWith(SlabLeakCheck.class)
class NativeGzipInteropTest {
    private static final dev.rdmarpc.core.MethodDescriptor<SimpleRequest, SimpleResponse> UNARY =
            dev.rdmarpc.core.MethodDescriptor.create("grpc.testing.TestService/UnaryCall", MethodType.UNARY,
                    ProtoMarshaller.of(SimpleRequest.getDefaultInstance()), ProtoMarshaller.of(SimpleResponse.getDefaultInstance()));
    private static final Metadata.Key<String> GRPC_ENCODING = Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);

    private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);
    private RpcServer nativeServer;
    private Server grpcServer;
    private ManagedChannel grpcChannel;
    private RpcChannel nativeChannel;
    private FrameProxy proxy;

    @AfterEach
    void stop() throws InterruptedException {
        if (grpcChannel != null) {
            grpcChannel.shutdownNow();
            grpcChannel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (nativeChannel != null) {
            nativeChannel.shutdownNow();
            nativeChannel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (proxy != null) {
            proxy.close();
        }
        if (nativeServer != null) {
            nativeServer.shutdownNow();
            nativeServer.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (grpcServer != null) {
            grpcServer.shutdownNow();
            grpcServer.awaitTermination(60, TimeUnit.SECONDS);
        }
        executor.shutdownNow();
    }

    /** A native UnaryCall: answers with the request's body size and {@code response_size} zero bytes, gzip when asked. */
    private void startNativeServer() throws IOException {
        nativeServer = RpcServer.forPort(0).transportMode(TransportMode.TCP)
                .addService(ServiceDefinition.builder("grpc.testing.TestService")
                        .addMethod(UNARY, ServerCalls.asyncUnaryCall((req, obs) -> {
                            if (req.getResponseCompressed().getValue()) {
                                ((ServerCallStreamObserver<SimpleResponse>) obs).setCompression("gzip");
                            }
                            obs.onNext(SimpleResponse.newBuilder().setUsername(Integer.toString(req.getPayload().getBody().size()))
                                    .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[req.getResponseSize()])))
                                    .build());
                            obs.onCompleted();
                        })).build())
                .build().start();
        proxy = new FrameProxy(nativeServer.getPort());
    }

    @Test
    void grpcJavaGzipToANativeServer() throws IOException {
        startNativeServer();
        grpcChannel = RdmaChannelBuilder.forAddress("127.0.0.1", proxy.port()).transportMode(TransportMode.TCP).build();
        AtomicReference<Metadata> headers = new AtomicReference<>();
        SimpleResponse r = TestServiceGrpc.newBlockingStub(grpcChannel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .withCompression("gzip")
                .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, new AtomicReference<>()))
                .unaryCall(request(100_000, 100_000, true));
        assertEquals("100000", r.getUsername(), "the native server read the whole gzip request");
        assertEquals(100_000, r.getPayload().getBody().size());
        assertEquals(1, proxy.compressedToServer.get(), "the request travelled compressed");
        assertEquals(1, proxy.compressedToClient.get(), "the native server answered with gzip, as grpc-java accepts it");
        assertEquals("gzip", headers.get().get(GRPC_ENCODING));
    }

    @Test
    void aNativeServerAnswersPlainUnlessAsked() throws IOException {
        startNativeServer();
        grpcChannel = RdmaChannelBuilder.forAddress("127.0.0.1", proxy.port()).transportMode(TransportMode.TCP).build();
        SimpleResponse r = TestServiceGrpc.newBlockingStub(grpcChannel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .unaryCall(request(1000, 1000, false));
        assertEquals("1000", r.getUsername());
        assertEquals(0, proxy.compressedToServer.get() + proxy.compressedToClient.get());
    }

    @Test
    void nativeGzipToAGrpcJavaServer() throws Exception {
        grpcServer = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                .addService(new TestServiceImpl(executor)).build().start();
        proxy = new FrameProxy(grpcServer.getPort());
        nativeChannel = RpcChannel.forAddress("127.0.0.1", proxy.port()).transportMode(TransportMode.TCP).build();
        SimpleResponse r = ClientCalls.blockingUnaryCall(nativeChannel, UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS).withCompression("gzip"),
                request(100_000, 100_000, true));
        assertEquals(100_000, r.getPayload().getBody().size());
        assertEquals(1, proxy.compressedToServer.get(), "the native request travelled compressed");
        assertEquals(1, proxy.compressedToClient.get(), "grpc-java answered with gzip, which the native call accepts");
    }
}
