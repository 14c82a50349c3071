package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TransportMode;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A queue pair that goes to the error state under an open connection ({@code ibv_modify_qp} to ERR from the test,
 * through the verbs bindings, as a fatal device error would): its calls fail with UNAVAILABLE long before their
 * deadline - whether the queue pair was idle (nothing posted: the poller's queue-pair check finds it) or busy (flushed
 * work requests tell at once) - the peer is remembered, so the next connection with it stays on TCP
 * ({@code peer-remembered}) until the memory is cleared, and slabs, regions, windows and queue pairs are back at
 * baseline ({@link RdmaEndToEndBase}).
 */
@Tag("rdma")
class QueuePairFaultRdmaTest extends RdmaEndToEndBase {

    @Test
    void anIdleQueuePairInErrorFailsItsCallAndItsPeerIsRemembered() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(4096, 1);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        RdmaEndpoint client = clientEndpoint();
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(ch.newCall(EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS)), new byte[1]);
        RdmaTests.await(10_000, () -> service.hangCalls.get() == 1, () -> "the HANG call reached its handler");
        long faultsBefore = RdmaMetrics.PATH_FAULTS.sum();

        long t0 = System.nanoTime();
        toError(client);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> hanging.get(timeout(60_000), TimeUnit.MILLISECONDS));
        Status status = ((StatusException) e.getCause()).getStatus();
        log("idle queue pair moved to ERR: the call in flight ended after " + (System.nanoTime() - t0) / 1_000_000
                + " ms with " + status);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode(), "failed by the fault, not by its deadline");
        assertTrue(RdmaMetrics.PATH_FAULTS.sum() > faultsBefore, "counted as a path fault");

        assertPeerRememberedThenForgotten();
    }

    @Test
    void aBusyQueuePairInErrorFailsItsStreamAndItsPeerIsRemembered() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(4096, 2);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        RdmaEndpoint client = clientEndpoint();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        AtomicLong received = new AtomicLong();
        ClientCall<byte[], byte[]> call = ch.newCall(EchoService.FIREHOSE,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                received.incrementAndGet();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(Integer.MAX_VALUE);
        call.sendMessage(Bytes.ofInts(4096));
        call.halfClose();
        RdmaTests.await(20_000, () -> received.get() > 50, () -> "the stream is flowing: " + received.get() + " messages");
        long faultsBefore = RdmaMetrics.PATH_FAULTS.sum();

        long t0 = System.nanoTime();
        toError(client);
        Status status = closed.get(timeout(60_000), TimeUnit.MILLISECONDS);
        log("busy queue pair moved to ERR after " + received.get() + " messages: the stream ended after "
                + (System.nanoTime() - t0) / 1_000_000 + " ms with " + status);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode(), "failed by the fault, not by its deadline");
        assertTrue(RdmaMetrics.PATH_FAULTS.sum() > faultsBefore, "counted as a path fault");
        RdmaTests.await(30_000, () -> service.events.contains("firehose-stopped")
                        || service.events.stream().anyMatch(ev -> ev.startsWith("firehose-failed")),
                () -> "the server's stream ended: " + service.events);

        assertPeerRememberedThenForgotten();
    }

    /** The next connection with 127.0.0.1 stays on TCP and works; once the memory is cleared, RDMA again. */
    private void assertPeerRememberedThenForgotten() throws Exception {
        assertTrue(PeerFallbacks.PROCESS.isRemembered(InetAddress.getLoopbackAddress()), "the peer is remembered");
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel next = channel(b -> b.transportMode(TransportMode.AUTO));
        byte[] req = Bytes.pattern(300_000, 3);
        assertEquals(-1, Bytes.mismatch(req, echo(next, req, 30_000)));
        assertEquals("tcp", next.currentTransport(), "a new connection with the remembered peer");
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertTrue(d.fallbackReasons().getOrDefault(Fallbacks.PEER_REMEMBERED, 0L) >= 1, "counted: " + d.fallbackReasons());

        PeerFallbacks.PROCESS.clear();
        RpcChannel after = channel();
        assertEquals(-1, Bytes.mismatch(req, echo(after, req, 30_000)));
        assertRdma(after);
    }

    /** The client's end of the connection to the test's server. */
    private RdmaEndpoint clientEndpoint() {
        return RdmaTests.context().endpoints().stream()
                .filter(ep -> ep.remoteAddress() instanceof InetSocketAddress a && a.getPort() == server.getPort())
                .findFirst().orElseThrow();
    }

    /** Moves the endpoint's queue pair to ERR on the poller thread (where its sends are posted from completions). */
    private static void toError(RdmaEndpoint ep) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ep.context.poller().execute(() -> {
            try {
                ep.qp.toError();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        done.get(timeout(30_000), TimeUnit.MILLISECONDS);
    }
}
