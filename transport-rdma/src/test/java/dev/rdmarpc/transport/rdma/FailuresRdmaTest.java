package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * When things go wrong over RDMA: a deadline and a cancel while rendezvous frames are in flight, a client process
 * killed mid-call, the TCP liveness connection lost under an RDMA connection, a client forced to TCP; and a client that sends by per-rendezvous regions (other JVM) talking to a
 * server that uses windows. Every case ends with slabs, regions, windows and queue pairs back at baseline.
 */
@Tag("rdma")
class FailuresRdmaTest extends RdmaEndToEndBase {

    @Test
    void aClientForcedToTcpTalksToAnRdmaServer() throws Exception {
        startServer();
        RpcChannel tcp = channel(b -> b.transportMode(TransportMode.TCP));
        RpcChannel rdma = channel();
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        byte[] req = Bytes.pattern(300_000, 1);
        assertEquals(-1, Bytes.mismatch(req, echo(tcp, req, 30_000)));
        assertEquals("tcp", tcp.currentTransport());
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertEquals(0, d.upgrades() + d.sends() + d.rendezvousSends(), "nothing went over RDMA: " + d);
        assertEquals(-1, Bytes.mismatch(req, echo(rdma, req, 30_000)));
        assertRdma(rdma);
        assertEquals(2, server.connectionCount(), "the server serves both");
    }

    @Test
    void losingTheTcpConnectionClosesTheRdmaConnection() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(4096, 2);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        RdmaEndpoint client = RdmaTests.context().endpoints().stream()
                .filter(ep -> ep.remoteAddress() instanceof java.net.InetSocketAddress a && a.getPort() == server.getPort())
                .findFirst().orElseThrow();
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(ch.newCall(EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(60_000), TimeUnit.MILLISECONDS)), new byte[1]);
        RdmaTests.await(10_000, () -> service.hangCalls.get() == 1 && server.connectionCount() == 1,
                () -> "the HANG call reached its handler over RDMA: " + service.hangCalls.get() + " HANG calls, "
                        + server.connectionCount() + " server connections");
        client.base().close("the test closes the TCP liveness connection");
        java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> hanging.get(timeout(30_000), TimeUnit.MILLISECONDS));
        Status status = ((StatusException) e.getCause()).getStatus();
        log("call in flight when the TCP connection closed: " + status);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode());
        RdmaTests.await(30_000, () -> RdmaMetrics.snapshot().connections() == 0 && server.connectionCount() == 0,
                () -> "both ends of the RDMA connection closed: " + RdmaMetrics.snapshot().connections()
                        + " RDMA connections, server connections " + server.connectionCount());
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)), "the channel reconnects");
        assertRdma(ch);
    }

    @Test
    void deadlineWhileRendezvousFramesAreInFlight() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(24 << 20, 5);
        long t0 = System.nanoTime();
        echo(ch, req, 120_000);
        long full = (System.nanoTime() - t0) / 1_000_000;
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        long deadline = Math.max(1, full / 4);
        // HANG never answers, so the deadline ends the call however fast the machine is; a quarter of a full echo's
        // time puts it in the middle of sending the request
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(ch, EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(deadline, TimeUnit.MILLISECONDS), req));
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("24 MiB echo takes " + full + " ms; with a " + deadline + " ms deadline: " + e.getStatus() + "; " + d);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        assertTrue(d.rendezvousSends() > 0, "the deadline came while rendezvous frames were moving: " + d);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 120_000)), "the connection carries on");
        assertRdma(ch);
    }

    @Test
    void cancelWhileRendezvousFramesAreInFlight() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        AtomicInteger received = new AtomicInteger();
        ClientCall<byte[], byte[]> call = ch.newCall(EchoService.STREAM,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                if (received.incrementAndGet() == 2) {
                    call.cancel("the test cancels mid-stream", null);
                }
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(Integer.MAX_VALUE);
        call.sendMessage(Bytes.ofInts(64, 1 << 20, 3));
        call.halfClose();
        Status status = closed.get(timeout(120_000), TimeUnit.MILLISECONDS);
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("cancelled a stream of 64 x 1 MiB after " + received.get() + " messages: " + status + "; " + d);
        assertEquals(Status.Code.CANCELLED, status.getCode());
        assertTrue(received.get() < 64 && d.rendezvousSends() >= 2, d.toString());
        byte[] req = Bytes.pattern(1 << 20, 9);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 60_000)), "the connection carries on");
    }

    @Test
    void aKilledClientProcessFreesItsQueuePairAndSlabs() throws Exception {
        startServer();
        try (ChildJvm child = new ChildJvm(List.of(), "firehose", Integer.toString(server.getPort()))) {
            String line = child.awaitLine("RECEIVING", timeout(30_000));
            assertNotNull(line, () -> "the child started streaming: " + child.lines());
            assertTrue(line.endsWith("over rdma"), line);
            assertEquals(1, server.connectionCount());
            assertEquals(1, RdmaMetrics.snapshot().connections(), "the server's end of the child's connection");
            RdmaTests.await(10_000, () -> service.firehoseSent.get() > 3, () -> "the server is streaming");
            long k0 = System.nanoTime();
            child.process.destroyForcibly();
            child.waitFor(timeout(30_000));
            log("killed the child after the server sent " + service.firehoseSent.get() + " messages; it was gone after "
                    + (System.nanoTime() - k0) / 1_000_000 + " ms");
        }
        long t0 = System.nanoTime();
        RdmaTests.await(30_000, () -> server.connectionCount() == 0, () -> "core closed the connection");
        log("core saw the connection close after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RdmaTests.await(30_000, () -> server.connectionCount() == 0 && RdmaMetrics.snapshot().connections() == 0,
                () -> "the server dropped the dead client's connection: " + server.connectionCount() + " connections, "
                        + RdmaMetrics.snapshot());
        log("the server freed the dead client's queue pair in " + (System.nanoTime() - t0) / 1_000_000 + " ms: "
                + RdmaMetrics.snapshot().minus(before));
        RdmaTests.await(30_000, () -> RdmaMetrics.snapshot().boundWindows() == 0,
                () -> "windows of the dead client's rendezvous released: " + RdmaMetrics.snapshot());
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(1 << 20, 4);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 60_000)), "the server keeps serving");
        assertRdma(ch);
    }

    @Test
    void aClientUsingRendezvousRegionsTalksToAServerUsingWindows() throws Exception {
        startServer();
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        try (ChildJvm child = new ChildJvm(List.of("-Drdmarpc.rdma.rendezvous=region"), "echo",
                Integer.toString(server.getPort()))) {
            assertEquals(0, child.waitFor(timeout(30_000)), () -> "child: " + child.lines());
            assertTrue(child.lines().contains("OK") && child.lines().contains("TRANSPORT rdma"), child.lines().toString());
            String counters = child.lines().stream().filter(l -> l.startsWith("COUNTERS")).findFirst().orElseThrow();
            assertTrue(counters.contains("rendezvousSends=1,") && counters.contains("rendezvousReads=1,"), counters);
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertTrue(d.rendezvousReads() >= 1 && d.rendezvousSends() >= 1, "this side read the region and sent by window: " + d);
    }
}
