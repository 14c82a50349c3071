package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The receive side is bounded: many concurrent 1 MiB calls on one connection make the server (and the client, for
 * the responses) receive many RTSs at once, yet no connection ever holds more than the read budget of rendezvous
 * destinations ({@link RendezvousReads#MAX_READ_BYTES}), while every call completes with its bytes intact.
 */
@Tag("rdma")
class ReceiveBudgetRdmaTest extends RdmaEndToEndBase {

    @Test
    void manyRendezvousAtOnceStayWithinTheReadBudget() throws Exception {
        startServer();
        RpcChannel ch = channel();
        echo(ch, new byte[1], 30_000);
        assertRdma(ch);
        RdmaMetrics.resetPeakReadBytesHeld();
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        int calls = 16;
        List<byte[]> requests = new ArrayList<>();
        List<CompletableFuture<byte[]>> responses = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            byte[] req = Bytes.pattern(1 << 20, 100 + i);
            requests.add(req);
            responses.add(ClientCalls.futureUnaryCall(ch.newCall(EchoService.ECHO, CallOptions.DEFAULT
                    .withDeadlineAfter(RdmaTests.timeout(120_000), TimeUnit.MILLISECONDS)), req));
        }
        for (int i = 0; i < calls; i++) {
            byte[] resp = responses.get(i).get(RdmaTests.timeout(120_000), TimeUnit.MILLISECONDS);
            assertEquals(-1, Bytes.mismatch(requests.get(i), resp), "call " + i + " content byte for byte");
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        long peak = RdmaMetrics.peakReadBytesHeld();
        log(calls + " concurrent 1 MiB calls: peak rendezvous destinations held by one connection " + peak
                + " bytes (budget " + RendezvousReads.MAX_READ_BYTES + "); " + d);
        assertTrue(d.rendezvousReads() >= 2L * calls, "requests and responses went by rendezvous: " + d);
        assertEquals(d.rendezvousSends(), d.rendezvousReads(), "every RTS was read: " + d);
        assertTrue(peak > 0, "destinations were allocated");
        assertTrue(peak <= RendezvousReads.MAX_READ_BYTES,
                "one connection held " + peak + " bytes of rendezvous destinations, over the budget");
    }
}
