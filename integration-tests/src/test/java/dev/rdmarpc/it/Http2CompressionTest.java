package dev.rdmarpc.it;

import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.CompressorRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.zip.DeflaterOutputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compressed requests from a stock grpc-java client (gRPC over HTTP/2) to native services, as gRPC's compression spec
 * has it: gzip reaches a method whose marshaller parses plain bytes (inflated by the server) and comes back gzip when
 * the handler asks; a message in an encoding the server cannot decode for a method is answered UNIMPLEMENTED, not
 * INTERNAL: an encoding the server does not have (here deflate) at once, with {@code grpc-accept-encoding} naming
 * gzip, and any compressed message to a method whose marshaller does not decompress. The connection carries on.
 */
class Http2CompressionTest {
    private static final int SIZE = 200_000;
    /** Plain bytes that core inflates for (as {@code ProtoMarshaller} does); the handler answers gzip. */
    private static final MethodDescriptor<byte[], byte[]> ECHO = Bytes.method("test.H2Compression/Echo", MethodDescriptor.MethodType.UNARY);
    private static final MethodDescriptor<byte[], byte[]> PLAIN_ECHO = MethodDescriptor.create("test.H2Compression/PlainEcho",
            MethodDescriptor.MethodType.UNARY, Bytes.UNCOMPRESSED_ONLY, Bytes.UNCOMPRESSED_ONLY);
    private static final Metadata.Key<String> ACCEPT_ENCODING = Metadata.Key.of("grpc-accept-encoding", Metadata.ASCII_STRING_MARSHALLER);

    private RpcServer server;
    private TcpProxy proxy;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = RpcServer.forPort(0).addService(ServiceDefinition.builder("test.H2Compression")
                        .addMethod(ECHO, ServerCalls.<byte[], byte[]>asyncUnaryCall((req, obs) -> {
                            ((ServerCallStreamObserver<byte[]>) obs).setCompression("gzip");
                            obs.onNext(req);
                            obs.onCompleted();
                        }))
                        .addMethod(PLAIN_ECHO, ServerCalls.<byte[], byte[]>asyncUnaryCall((req, obs) -> {
                            obs.onNext(req);
                            obs.onCompleted();
                        }))
                        .build())
                .build().start();
        proxy = new TcpProxy(server.getPort());
        CompressorRegistry compressors = CompressorRegistry.newEmptyInstance();
        compressors.register(new Codec.Gzip());
        compressors.register(new Compressor() {
            @Override
            public String getMessageEncoding() {
                return "deflate";
            }

            @Override
            public OutputStream compress(OutputStream os) {
                return new DeflaterOutputStream(os);
            }
        });
        channel = NettyChannelBuilder.forAddress("127.0.0.1", proxy.port()).negotiationType(NegotiationType.PLAINTEXT)
                .compressorRegistry(compressors).build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        proxy.close();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
    }

    /** A call compressed with {@code compression} (null: uncompressed). */
    private byte[] call(MethodDescriptor<byte[], byte[]> method, String compression, byte[] request) {
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
        return ClientCalls.blockingUnaryCall(channel, StockGrpc.bytesMethod(method.getFullMethodName()),
                compression == null ? options : options.withCompression(compression), request);
    }

    @Test
    void gzipReachesANativeServiceAndComesBackGzip() {
        byte[] request = new byte[SIZE];
        assertArrayEquals(request, call(ECHO, "gzip", request));
        assertTrue(proxy.toServer.get() < SIZE / 10, "the request went gzipped: " + proxy.toServer.get() + " bytes");
        assertTrue(proxy.toClient.get() < SIZE / 10, "the response came gzipped: " + proxy.toClient.get() + " bytes");
    }

    @Test
    void anEncodingTheServerDoesNotHaveIsUnimplementedNamingTheOneItHas() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(ECHO, "deflate", new byte[100]));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription().contains("deflate"), e.getStatus().getDescription());
        assertEquals("gzip", e.getTrailers().get(ACCEPT_ENCODING));
        assertArrayEquals(new byte[]{1, 2}, call(ECHO, null, new byte[]{1, 2}), "the connection carries on");
    }

    @Test
    void gzipToAMethodWhoseMarshallerDoesNotDecompressIsUnimplemented() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(PLAIN_ECHO, "gzip", new byte[100]));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription().contains("compressed"), e.getStatus().getDescription());
        assertArrayEquals(new byte[]{3}, call(PLAIN_ECHO, null, new byte[]{3}), "uncompressed, the same method answers");
    }
}
