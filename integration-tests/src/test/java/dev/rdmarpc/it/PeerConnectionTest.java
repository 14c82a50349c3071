package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.testing.Await;
import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A server's view of its clients' connections: open/close events, the call's connection, ping, GOAWAY, close. */
class PeerConnectionTest extends LoopbackTest {
    private final BlockingQueue<PeerConnection> opened = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> closed = new LinkedBlockingQueue<>();
    private final BlockingQueue<PeerConnection> pinged = new LinkedBlockingQueue<>();

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.connectionListener(new PeerConnectionListener() {
            @Override
            public void connectionOpened(PeerConnection connection) {
                opened.add(connection);
            }

            @Override
            public void connectionClosed(PeerConnection connection, String reason) {
                closed.add(reason);
            }

            @Override
            public void pingReceived(PeerConnection connection) {
                pinged.add(connection);
            }
        });
    }

    private PeerConnection awaitOpened() throws InterruptedException {
        PeerConnection c = opened.poll(60, TimeUnit.SECONDS);
        assertNotNull(c, "connectionOpened was called");
        return c;
    }

    @Test
    void theListenerSeesTheConnectionAndItsCallsAndTheServerCanPingIt() throws Exception {
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[8]);
        PeerConnection c = awaitOpened();
        assertEquals("tcp", c.transportName());
        InetSocketAddress remote = assertInstanceOf(InetSocketAddress.class, c.remoteAddress());
        assertTrue(remote.getAddress().isLoopbackAddress(), remote.toString());
        // the server leaves the call right after its trailers go out, which may be after the client has the answer
        Await.until(() -> c.activeCalls() == 0, "the finished call left the connection");
        for (int i = 0; i < 3; i++) {
            assertTrue(c.ping().get(60, TimeUnit.SECONDS) > 0);
        }
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(channel.newCall(TestService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), new byte[1]);
        Await.until(() -> c.activeCalls() == 1, "the hanging call is open on the connection");
        hanging.cancel(true);
        Await.until(() -> c.activeCalls() == 0, "the cancelled call left the connection");
        assertEquals(0, opened.size(), "one connection");
    }

    @Test
    void theListenerIsToldOfEveryPingTheClientSends() throws Exception {
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[8]);
        PeerConnection c = awaitOpened();
        for (int i = 0; i < 3; i++) {
            assertTrue(channel.ping().get(60, TimeUnit.SECONDS) > 0, "the server answered");
            assertSame(c, pinged.poll(60, TimeUnit.SECONDS), "pingReceived names the client's connection");
        }
        assertTrue(c.ping().get(60, TimeUnit.SECONDS) > 0);
        // The listener is told on the connection's I/O thread, in frame order: the client's ACK of the server's PING
        // came in before the client's next PING, so by the time that one is reported a wrong report would be queued.
        assertTrue(channel.ping().get(60, TimeUnit.SECONDS) > 0);
        assertSame(c, pinged.poll(60, TimeUnit.SECONDS), "the client's later PING is reported");
        assertNull(pinged.poll(), "the server's own PING's ACK is not a received PING");
    }

    @Test
    void goAwayLetsTheOpenCallFinishAndNewCallsUseANewConnection() throws Exception {
        CompletableFuture<byte[]> held = ClientCalls.futureUnaryCall(channel.newCall(TestService.HOLD, CallOptions.DEFAULT),
                Bytes.ofInt(300));
        PeerConnection first = awaitOpened();
        assertTrue(service.holdStarted.await(60, TimeUnit.SECONDS), "the call reached its handler");
        assertEquals(1, first.activeCalls(), "the held call is open");
        first.goAway();
        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(300), held.get(60, TimeUnit.SECONDS), "the call in flight finished normally");
        String reason = closed.poll(60, TimeUnit.SECONDS);
        assertNotNull(reason, "the drained connection closed");
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[8]);
        PeerConnection second = awaitOpened();
        assertNotSame(first, second, "new calls went over a new connection");
        ExecutionException e = assertThrows(ExecutionException.class, () -> first.ping().get(60, TimeUnit.SECONDS));
        assertEquals(Status.Code.UNAVAILABLE, assertInstanceOf(StatusException.class, e.getCause()).getStatus().getCode());
    }

    @Test
    void closeFailsTheOpenCallsAndIsReported() throws Exception {
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(channel.newCall(TestService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), new byte[1]);
        PeerConnection c = awaitOpened();
        Await.until(() -> c.activeCalls() == 1, "the hanging call is open");
        c.close("closed by the test");
        ExecutionException e = assertThrows(ExecutionException.class, () -> hanging.get(60, TimeUnit.SECONDS));
        assertEquals(Status.Code.UNAVAILABLE, Status.fromThrowable(e.getCause()).getCode());
        String reason = closed.poll(60, TimeUnit.SECONDS);
        assertNotNull(reason);
        assertTrue(reason.contains("closed by the test"), reason);
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[3]),
                "the channel reconnects");
    }

    @Test
    void callsRacingRepeatedGoAwaysAllSucceed() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
        Thread[] callers = new Thread[4];
        for (int t = 0; t < callers.length; t++) {
            callers[t] = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[16]);
                        ok.incrementAndGet();
                    } catch (RuntimeException e) {
                        failures.add(e);
                    }
                }
            });
            callers[t].start();
        }
        int goAways = 0;
        try {
            for (int round = 0; round < 8; round++) {
                PeerConnection c = awaitOpened();
                int okAtOpen = ok.get();
                Await.until(() -> ok.get() >= okAtOpen + 10, "calls are flowing after connection " + round + " opened");
                c.goAway();
                goAways++;
            }
        } finally {
            stop.set(true);
            for (Thread t : callers) {
                t.join(60_000);
            }
        }
        assertTrue(failures.isEmpty(), () -> failures.size() + " calls failed across " + 8 + " GOAWAYs, first: " + failures.peek());
        assertEquals(8, goAways);
        assertTrue(ok.get() > 8, "calls completed: " + ok.get());
    }
}
