package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What unknown methods, oversize messages, dead servers and busy ports get. */
class BadInputTest extends LoopbackTest {
    static final int MAX = 64 * 1024;

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.maxInboundMessageSize(MAX);
    }

    @Override
    protected RpcChannel.Builder configureChannel(RpcChannel.Builder b) {
        return b.maxInboundMessageSize(MAX);
    }

    private byte[] echo(byte[] req) {
        return ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, req);
    }

    @Test
    void unknownServiceOrMethodIsUnimplemented() {
        for (String name : new String[]{"test.TestService/Nope", "no.Such/Echo"}) {
            MethodDescriptor<byte[], byte[]> m = MethodDescriptor.create(name, MethodDescriptor.MethodType.UNARY,
                    Bytes.MARSHALLER, Bytes.MARSHALLER);
            StatusException e = assertThrows(StatusException.class,
                    () -> ClientCalls.blockingUnaryCall(channel, m, CallOptions.DEFAULT, new byte[1]));
            assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains(name), e.getStatus().getDescription());
        }
        assertArrayEquals(new byte[]{5}, echo(new byte[]{5}), "the connection is still usable");
    }

    @Test
    void oversizeRequestIsResourceExhaustedAndTheConnectionCarriesOn() {
        StatusException e = assertThrows(StatusException.class, () -> echo(new byte[MAX + 1]));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains(String.valueOf(MAX + 1)), e.getStatus().getDescription());
        byte[] ok = Bytes.pattern(MAX, 3);
        assertArrayEquals(ok, echo(ok));
        assertEquals(1, server.connectionCount());
    }

    @Test
    void oversizeResponseIsResourceExhaustedOnTheClient() {
        byte[] req = new byte[8];
        System.arraycopy(Bytes.ofInt(1), 0, req, 0, 4);
        System.arraycopy(Bytes.ofInt(MAX + 100), 0, req, 4, 4);
        StatusException e = assertThrows(StatusException.class, () -> {
            var it = ClientCalls.blockingServerStreamingCall(channel, TestService.STREAM, CallOptions.DEFAULT, req);
            while (it.hasNext()) {
                it.next();
            }
        });
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertArrayEquals(new byte[]{1}, echo(new byte[]{1}));
    }

    @Test
    void closedPortIsUnavailableNamingTheAddress() throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        long baseline = SlabPool.shared().inUseBuffers();
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", port).build();
        try {
            StatusException e = assertThrows(StatusException.class,
                    () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, new byte[1]));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("127.0.0.1:" + port), e.getStatus().getDescription());
        } finally {
            ch.shutdownNow();
        }
        assertSlabsBackToBaseline(baseline);
    }

    @Test
    void serverDyingMidCallIsUnavailable() throws Exception {
        CompletableFuture<byte[]> f = ClientCalls.futureUnaryCall(channel.newCall(TestService.HANG, CallOptions.DEFAULT), new byte[1]);
        Await.until(() -> service.calls.get() > 0, "the HANG call reached its handler");
        server.shutdownNow();
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        StatusException se = assertInstanceOf(StatusException.class, e.getCause());
        assertEquals(Status.Code.UNAVAILABLE, se.getStatus().getCode());
        assertTrue(service.hangCancelled.await(60, TimeUnit.SECONDS), "the handler saw the shutdown as a cancellation");
    }

    @Test
    void serverGoneBeforeTheCallIsUnavailable() throws Exception {
        assertArrayEquals(new byte[]{1}, echo(new byte[]{1}));
        int port = server.getPort();
        server.shutdownNow();
        assertTrue(server.awaitTermination(60, TimeUnit.SECONDS));
        StatusException e = assertThrows(StatusException.class, () -> echo(new byte[]{2}));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("127.0.0.1:" + port), e.getStatus().getDescription());
    }

    @Test
    void portInUseNamesThePort() throws IOException {
        int port = server.getPort();
        RpcServer second = RpcServer.forPort(port).addService(service.definition()).build();
        IOException e = assertThrows(IOException.class, second::start);
        assertTrue(e.getMessage().contains(String.valueOf(port)), e.getMessage());
        second.shutdownNow();
        assertArrayEquals(new byte[]{1}, echo(new byte[]{1}), "the first server is unaffected");
    }

    @Test
    void gracefulShutdownLetsCallsInFlightFinishAndRefusesNewOnes() throws Exception {
        CompletableFuture<byte[]> held = ClientCalls.futureUnaryCall(channel.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(300));
        assertTrue(service.holdStarted.await(60, TimeUnit.SECONDS), "the call reached its handler");
        server.shutdown();
        assertFalse(server.isTerminated(), "a graceful shutdown waits for the call its handler still holds");
        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(300), held.get(60, TimeUnit.SECONDS));
        assertTrue(server.awaitTermination(60, TimeUnit.SECONDS));
        StatusException e = assertThrows(StatusException.class, () -> echo(new byte[]{1}));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    }
}
