package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.testing.Await;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** PING round trips: answered by a live server, UNAVAILABLE when there is none or it goes away. */
class PingTest extends LoopbackTest {

    @Test
    void aLiveServerAnswersPingsOnTheCallsConnection() throws Exception {
        for (int i = 0; i < 5; i++) {
            long rtt = channel.ping().get(60, TimeUnit.SECONDS);
            assertTrue(rtt > 0, "round trip " + rtt + " ns");
        }
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[8]);
        CompletableFuture<?>[] many = new CompletableFuture<?>[50];
        for (int i = 0; i < many.length; i++) {
            many[i] = channel.ping();
        }
        CompletableFuture.allOf(many).get(60, TimeUnit.SECONDS);
        assertEquals(1, server.connectionCount(), "pings travel on the calls' connection");
    }

    @Test
    void noServerMeansUnavailable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (RpcChannel nowhere = RpcChannel.forAddress("127.0.0.1", port).build()) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> nowhere.ping().get(60, TimeUnit.SECONDS));
            StatusException se = assertInstanceOf(StatusException.class, e.getCause());
            assertEquals(Status.Code.UNAVAILABLE, se.getStatus().getCode());
            assertTrue(se.getStatus().getDescription().contains("127.0.0.1:" + port), se.getStatus().getDescription());
        }
    }

    @Test
    void aServerThatGoesAwayFailsThePingsAfterIt() throws Exception {
        channel.ping().get(60, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        // the close may reach the client a moment after the server has stopped: until then a ping may still go out on
        // the old connection, where it fails once the close arrives; either way the pings fail from some point on
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Await.until(() -> {
            try {
                channel.ping().get(60, TimeUnit.SECONDS);
                return false;
            } catch (ExecutionException e) {
                failure.set(e.getCause());
                return true;
            } catch (InterruptedException | TimeoutException e) {
                throw new AssertionError("a ping neither answered nor failed", e);
            }
        }, "a ping failing once the server is gone");
        StatusException se = assertInstanceOf(StatusException.class, failure.get());
        assertEquals(Status.Code.UNAVAILABLE, se.getStatus().getCode());
    }

    @Test
    void aShutDownChannelStillPingsWhileItsCallsFinish() throws Exception {
        java.util.concurrent.CompletableFuture<byte[]> held = ClientCalls.futureUnaryCall(
                channel.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(500));
        assertTrue(service.holdStarted.await(60, TimeUnit.SECONDS), "the call reached its handler");
        channel.shutdown();
        assertTrue(channel.ping().get(60, TimeUnit.SECONDS) > 0, "the connection finishing the call answers");
        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(500), held.get(60, TimeUnit.SECONDS));
        assertTrue(channel.awaitTermination(60, TimeUnit.SECONDS));
        ExecutionException e = assertThrows(ExecutionException.class, () -> channel.ping().get(60, TimeUnit.SECONDS));
        assertEquals(Status.Code.UNAVAILABLE, assertInstanceOf(StatusException.class, e.getCause()).getStatus().getCode());
    }
}
