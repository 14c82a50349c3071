package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client noticing a dead server (keepalive) and reconnecting with gRPC's backoff, through a {@link TcpProxy} in
 * front of the real server that stops forwarding (a server that stops answering) or goes away and comes back.
 */
class ClientLivenessTest extends LoopbackTest {
    private TcpProxy proxy;
    private RpcChannel viaProxy;

    @BeforeEach
    void startProxy() throws IOException {
        proxy = new TcpProxy(server.getPort());
    }

    @AfterEach
    void stopProxy() throws Exception {
        if (viaProxy != null) {
            viaProxy.shutdownNow();
            viaProxy.awaitTermination(60, TimeUnit.SECONDS);
        }
        proxy.close();
    }

    private RpcChannel.Builder toProxy() {
        return RpcChannel.forAddress("127.0.0.1", proxy.port());
    }

    private byte[] echo(byte[] request) {
        return ClientCalls.blockingUnaryCall(viaProxy, TestService.ECHO,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), request);
    }

    /** The status an ECHO through the proxy ends with. */
    private Status echoStatus() {
        try {
            echo(new byte[] {1});
            return Status.OK;
        } catch (StatusException e) {
            return e.getStatus();
        }
    }

    @Test
    void keepaliveClosesTheConnectionToAServerThatStopsAnswering() throws Exception {
        viaProxy = toProxy().keepAliveTime(Duration.ofMillis(100)).keepAliveTimeout(Duration.ofSeconds(5)).build();
        assertArrayEquals(new byte[] {7}, echo(new byte[] {7}));
        CallKindsTest.Collector<byte[]> hang = new CallKindsTest.Collector<>();
        ClientCalls.asyncUnaryCall(viaProxy.newCall(TestService.HANG, CallOptions.DEFAULT), new byte[0], hang);
        Await.until(() -> service.lastRemainingNanos.get() != -1, "the HANG call reaching the server");
        proxy.pause(); // the server is still there, but nothing it sends arrives, and nothing reaches it
        Status s = hang.status();
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), "a call on the dead connection fails: " + s);
        assertTrue(s.getDescription().contains("keepalive"), "and says why: " + s);
        assertNull(viaProxy.currentTransport(), "the connection is closed");

        proxy.resume();
        Await.until(() -> echoStatus().isOk(), "a call on a new connection");
    }

    @Test
    void callsFailFastWhileTheBackoffWaitsAndResetConnectBackoffRetriesAtOnce() throws Exception {
        // a backoff far longer than the test: nothing may dial again unless the test resets it
        viaProxy = toProxy().reconnectBackoff(Duration.ofHours(1), Duration.ofHours(2)).build();
        assertArrayEquals(new byte[] {1}, echo(new byte[] {1}));
        proxy.goAway();
        // the channel is in its backoff once a call fails naming the next attempt; which failure started it (the
        // refused dial, or the lost connection when its close was seen first) depends on timing
        Await.until(() -> {
            Status s = echoStatus();
            return s.getCode() == Status.Code.UNAVAILABLE && s.getDescription().contains("next attempt in");
        }, "a failed connection attempt and the backoff after it");
        proxy.comeBack();
        StatusException e = assertThrows(StatusException.class, () -> echo(new byte[] {2}));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("next attempt in"), "the backoff is named: " + e.getStatus());
        assertEquals(1, proxy.accepted(), "no attempt while the backoff waits");

        viaProxy.resetConnectBackoff();
        assertArrayEquals(new byte[] {3}, echo(new byte[] {3}));
        assertEquals(2, proxy.accepted());
    }

    @Test
    void anAttemptOnASocketThatNeverAnswersTimesOut() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) { // accepts, never reads
            viaProxy = RpcChannel.forAddress("127.0.0.1", silent.getLocalPort()).connectTimeout(Duration.ofMillis(200))
                    .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(20)).build();
            StatusException e = assertThrows(StatusException.class, () -> echo(new byte[] {1}));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("no HELLO"), e.getStatus().toString());
        }
    }

    @Test
    void aServerThatGoesAwayAndComesBackIsReconnectedToOnceTheBackoffPasses() throws Exception {
        viaProxy = toProxy().reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(40)).build();
        assertArrayEquals(new byte[] {1}, echo(new byte[] {1}));
        proxy.goAway();
        Await.until(() -> echoStatus().getCode() == Status.Code.UNAVAILABLE, "calls failing while the server is away");
        proxy.comeBack();
        Await.until(() -> echoStatus().isOk(), "a call once the server is back");
        assertEquals(2, proxy.accepted());
    }
}
