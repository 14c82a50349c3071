package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.RpcChannel;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Unary calls through RpcServer/RpcChannel over RDMA, each size on the path it must take (read from the counters):
 * 64 B inline, 4 KiB eager, 1 MiB and 64 MiB by rendezvous (RTS → RDMA READ → FIN), content checked byte for byte.
 */
@Tag("rdma")
class UnaryPathsRdmaTest extends RdmaEndToEndBase {

    @Test
    void smallCallsGoInline() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, Bytes.pattern(64, 0), 30_000); // connect and warm up
        assertRdma(ch);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        for (int i = 1; i <= 5; i++) {
            byte[] req = Bytes.pattern(64, i);
            assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("5 unary calls of 64 B: " + d);
        assertTrue(d.inlineSends() >= 10, "every request and response went inline: " + d);
        assertEquals(0, d.eagerSends(), "no eager SEND: " + d);
        assertEquals(0, d.rendezvousSends(), "no rendezvous: " + d);
    }

    @Test
    void fourKibGoesEager() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        for (int i = 0; i < 3; i++) {
            byte[] req = Bytes.pattern(4096, i);
            assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("3 unary calls of 4 KiB: " + d);
        assertTrue(d.eagerSends() >= 6, "requests and responses went as eager SENDs: " + d);
        assertEquals(0, d.rendezvousSends(), "no rendezvous: " + d);
        assertTrue(d.eagerBytes() >= 6 * 4096, "eager bytes: " + d);
    }

    @Test
    void oneMibGoesByRendezvous() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        byte[] req = Bytes.pattern(1 << 20, 11);
        byte[] resp = echo(ch, req, 30_000);
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("unary 1 MiB: " + d);
        assertEquals(req.length, resp.length);
        assertEquals(-1, Bytes.mismatch(req, resp), "content byte for byte");
        assertTrue(d.rendezvousSends() >= 2 && d.rendezvousReads() >= 2, "both directions by rendezvous: " + d);
        assertEquals(d.rendezvousSends(), d.rendezvousReads(), "every RTS was read: " + d);
        assertTrue(d.rendezvousReadBytes() >= 2L * (1 << 20) - 16, "bytes pulled by READ: " + d);
    }

    @Test
    void sixtyFourMibGoesByRendezvous() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        byte[] req = Bytes.pattern(64 << 20, 64);
        long t0 = System.nanoTime();
        byte[] resp = echo(ch, req, 120_000);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("unary 64 MiB in " + ms + " ms: " + d);
        assertEquals(req.length, resp.length);
        assertEquals(-1, Bytes.mismatch(req, resp), "content byte for byte");
        assertTrue(d.rendezvousSends() >= 128, "64 frames of 1 MiB each way by rendezvous: " + d);
        assertEquals(d.rendezvousSends(), d.rendezvousReads(), "every RTS was read: " + d);
        assertTrue(d.rendezvousReadBytes() >= 2L * (64 << 20), "bytes pulled by READ: " + d);
    }
}
