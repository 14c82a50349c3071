package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import io.grpc.TlsServerCredentials;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A native {@link RpcChannel} with TLS calling a stock grpc-java TLS server: ALPN decides the protocol (the stock
 * server picks {@code h2}), with no second connection; an rdmarpc TLS server offered both still gets {@code rdmarpc/1};
 * a channel that speaks rdmarpc only names the mismatch.
 */
class GrpcServerTlsTest {
    /** A bound for a hung call only: every call here ends long before. */
    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }
    private long baseline;
    private StockGrpcServer server;
    private RpcChannel channel;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        server = new StockGrpcServer(TlsServerCredentials.newBuilder()
                .keyManager(TlsFiles.file("server.pem").toFile(), TlsFiles.file("server.key").toFile()).build(), 16 << 20);
    }

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        server.close();
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcChannel channel(WireProtocol protocol, int port) {
        channel = RpcChannel.forAddress("localhost", port).tls(TlsFiles.client().build()).wireProtocol(protocol).build();
        return channel;
    }

    @Test
    void autoSpeaksHttp2ToAStockTlsServer() {
        RpcChannel ch = channel(WireProtocol.AUTO, server.port());
        byte[] request = Bytes.pattern(70_000, 1);
        assertArrayEquals(request, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), request));
        assertEquals("h2", ch.currentTransport());
        assertNotNull(ch.currentSslSession());
        assertEquals(1, server.connections.get());
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.THROW, options(), new byte[1]));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals(StockGrpcServer.ERROR_DESCRIPTION, e.getStatus().getDescription());
    }

    @Test
    void grpcOnlyChannelsWork() {
        RpcChannel ch = channel(WireProtocol.GRPC, server.port());
        assertArrayEquals(new byte[9], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[9]));
        assertEquals("h2", ch.currentTransport());
    }

    @Test
    void rdmarpcOnlyChannelsNameTheMismatch() {
        RpcChannel ch = channel(WireProtocol.RDMARPC, server.port());
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[1]));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("rdmarpc/1"), e.getStatus().getDescription());
    }

    @Test
    void anRdmarpcServerStillGetsRdmarpcFromAnAutoChannel() throws Exception {
        RpcServer rdmarpc = RpcServer.forPort(0).addService(new TestService().definition())
                .tls(TlsFiles.server("server").build()).build().start();
        try {
            RpcChannel ch = channel(WireProtocol.AUTO, rdmarpc.getPort());
            assertArrayEquals(new byte[4], ClientCalls.blockingUnaryCall(ch, TestService.ECHO, options(), new byte[4]));
            assertEquals("tcp", ch.currentTransport(), "ALPN agreed to rdmarpc/1 (h2 would make the transport h2)");
            assertNotNull(ch.currentSslSession());
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            rdmarpc.shutdownNow();
            rdmarpc.awaitTermination(60, TimeUnit.SECONDS);
        }
    }
}
