package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPOutputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gzip on the native API between a native client and server, through a {@link TcpProxy} that counts the bytes each
 * way: compressed only when the caller asks ({@code CallOptions.withCompression}, {@code setCompression} on the server
 * for a client that accepts it), and a message that inflates past the receiver's size limit refused with
 * RESOURCE_EXHAUSTED without being inflated whole.
 */
class GzipTest extends LoopbackTest {
    private static final String NAME = "test.Gzip";
    /** Echoes the request; the response is gzipped (when the client accepts it) if the request's first byte is 1. */
    static final MethodDescriptor<byte[], byte[]> ECHO =
            Bytes.method(NAME + "/Echo", MethodType.UNARY);
    /** Answers with as many zero bytes as the 4-byte request says, gzipped when the client accepts it. */
    static final MethodDescriptor<byte[], byte[]> ZEROS =
            Bytes.method(NAME + "/Zeros", MethodType.UNARY);
    private static final int SERVER_LIMIT = 1 << 20;
    private static final int SIZE = 512 * 1024;

    private final AtomicReference<Metadata> requestHeaders = new AtomicReference<>();
    private TcpProxy proxy;
    private RpcChannel viaProxy;

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.maxInboundMessageSize(SERVER_LIMIT).addService(ServiceDefinition.builder(NAME)
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) obs;
                    requestHeaders.set(call.getRequestHeaders());
                    if (req.length > 0 && req[0] == 1) {
                        call.setCompression("gzip");
                    }
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(ZEROS, ServerCalls.asyncUnaryCall((req, obs) -> {
                    ((ServerCallStreamObserver<byte[]>) obs).setCompression("gzip");
                    obs.onNext(new byte[Bytes.toInt(req)]);
                    obs.onCompleted();
                }))
                .build());
    }

    @BeforeEach
    void startProxy() throws IOException {
        proxy = new TcpProxy(server.getPort());
        viaProxy = RpcChannel.forAddress("127.0.0.1", proxy.port()).maxInboundMessageSize(SERVER_LIMIT).build();
    }

    @AfterEach
    void stopProxy() throws Exception {
        viaProxy.shutdownNow();
        viaProxy.awaitTermination(60, TimeUnit.SECONDS);
        proxy.close();
    }

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    /** SIZE compressible bytes starting with {@code first}. */
    private static byte[] compressible(int first) {
        byte[] b = new byte[SIZE];
        b[0] = (byte) first;
        for (int i = 1; i < b.length; i++) {
            b[i] = (byte) (i / 4096);
        }
        return b;
    }

    @Test
    void nothingIsCompressedUnlessTheCallerAsks() {
        byte[] request = compressible(1); // the server asks for gzip, but this client does not accept it
        assertArrayEquals(request, ClientCalls.blockingUnaryCall(viaProxy, ECHO, options(), request));
        assertTrue(proxy.toServer.get() > SIZE, "the request went plain: " + proxy.toServer.get() + " bytes");
        assertTrue(proxy.toClient.get() > SIZE, "the response went plain: " + proxy.toClient.get() + " bytes");
        assertNull(requestHeaders.get().get(Metadata.Key.ascii("grpc-encoding")));
    }

    @Test
    void aGzipCallCompressesItsRequestsAndGetsGzipWhenTheServerAsks() {
        byte[] request = compressible(1);
        assertArrayEquals(request, ClientCalls.blockingUnaryCall(viaProxy, ECHO, options().withCompression("gzip"), request));
        assertTrue(proxy.toServer.get() < SIZE / 10, "the request went gzipped: " + proxy.toServer.get() + " bytes");
        assertTrue(proxy.toClient.get() < SIZE / 10, "the response came gzipped: " + proxy.toClient.get() + " bytes");
        assertEquals("gzip", requestHeaders.get().get(Metadata.Key.ascii("grpc-encoding")));
        assertEquals("gzip", requestHeaders.get().get(Metadata.Key.ascii("grpc-accept-encoding")));
    }

    @Test
    void theServerAnswersPlainWhenItDoesNotAsk() {
        byte[] request = compressible(0);
        assertArrayEquals(request, ClientCalls.blockingUnaryCall(viaProxy, ECHO, options().withCompression("gzip"), request));
        assertTrue(proxy.toServer.get() < SIZE / 10, "the request went gzipped");
        assertTrue(proxy.toClient.get() > SIZE, "the response went plain: " + proxy.toClient.get() + " bytes");
    }

    @Test
    void aRequestThatInflatesPastTheServersLimitIsRefused() throws IOException {
        // 256 MiB of zeros, about 250 KiB gzipped: far under the limit on the wire, far over it inflated
        byte[] bomb = gzipOfZeros(256L << 20);
        assertTrue(bomb.length < SERVER_LIMIT);
        StatusException e = assertThrows(StatusException.class, () -> sendRaw(bomb));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription().contains("inflates past"), e.getStatus().getDescription());
        // the connection carries on
        assertArrayEquals(new byte[] {5}, ClientCalls.blockingUnaryCall(viaProxy, ECHO, options(), new byte[] {5}));
    }

    @Test
    void aResponseThatInflatesPastTheClientsLimitIsRefused() {
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(viaProxy, ZEROS,
                options().withCompression("gzip"), Bytes.ofInt(64 << 20)));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription().contains("inflates past"), e.getStatus().getDescription());
        assertTrue(proxy.toClient.get() < SERVER_LIMIT, "it travelled small: " + proxy.toClient.get() + " bytes");
    }

    /** Sends {@code gzip} as a request gzipped already (a marshaller that writes it as it is, flagged compressed). */
    private void sendRaw(byte[] gzip) {
        MethodDescriptor<CompressedMessagesTest.Packed, CompressedMessagesTest.Packed> raw = MethodDescriptor.create(
                ECHO.getFullMethodName(), MethodType.UNARY, CompressedMessagesTest.PACKED, CompressedMessagesTest.PACKED);
        ClientCalls.blockingUnaryCall(viaProxy, raw, options().withHeaders(gzipHeaders()), new CompressedMessagesTest.Packed(gzip, true));
    }

    private static Metadata gzipHeaders() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("grpc-encoding"), "gzip");
        return md;
    }

    private static byte[] gzipOfZeros(long size) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] zeros = new byte[1 << 20];
        try (GZIPOutputStream gz = new GZIPOutputStream(out, 1 << 16)) {
            for (long n = 0; n < size; n += zeros.length) {
                gz.write(zeros);
            }
        }
        return out.toByteArray();
    }
}
