package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Many queue pairs on the device's one SRQ: 100 concurrent calls over 4 connections, and a burst of SENDs larger than
 * the whole SRQ while the test's own queue pairs hold every receive of it ({@link SrqThief}), so senders meet an empty
 * SRQ and live on RNR retry until the receives come back: nothing is lost, including rendezvous messages whose
 * memory-window binds sit in a send queue that RNR retry replays.
 */
@Tag("rdma")
class SharedReceiveQueueRdmaTest extends RdmaEndToEndBase {
    /** Larger than a receive buffer (8 KiB by default): sent by rendezvous. */
    private static final int RENDEZVOUS_SIZE = 40_000;

    private static CallOptions deadline(long ms) {
        return CallOptions.DEFAULT.withDeadlineAfter(timeout(ms), TimeUnit.MILLISECONDS);
    }

    @Test
    void hundredConcurrentCallsOverFourConnections() throws Exception {
        startServer();
        List<RpcChannel> chs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            RpcChannel ch = channel();
            echo(ch, new byte[1], 30_000);
            assertRdma(ch);
            chs.add(ch);
        }
        RdmaDeviceContext ctx = RdmaTests.context();
        assertEquals(8, RdmaMetrics.snapshot().connections(), "4 client + 4 server queue pairs on one SRQ");
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
        List<byte[]> requests = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            int size = i % 10 == 9 ? 100_000 : i % 2 == 0 ? 100 : 3000;
            byte[] req = Bytes.pattern(size, i);
            requests.add(req);
            calls.add(ClientCalls.futureUnaryCall(chs.get(i % 4).newCall(EchoService.ECHO, deadline(60_000)), req));
        }
        for (int i = 0; i < 100; i++) {
            assertEquals(-1, Bytes.mismatch(requests.get(i), calls.get(i).get(timeout(60_000), TimeUnit.MILLISECONDS)),
                    "call " + i);
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("100 concurrent calls over 4 connections, SRQ depth " + ctx.srqDepth() + ": " + d);
        assertTrue(d.inlineSends() > 0 && d.eagerSends() > 0 && d.rendezvousSends() >= 20, d.toString());
        assertEquals(0, d.completionErrors());
    }

    @Test
    void aBurstLargerThanTheSrqLosesNothing() throws Exception {
        startServer();
        RpcChannel a = channel();
        RpcChannel b = channel();
        echo(a, new byte[1], 30_000);
        echo(b, new byte[1], 30_000);
        RdmaDeviceContext ctx = RdmaTests.context();
        int depth = ctx.srqDepth();
        int perStream = depth; // two streams: twice the SRQ's receives, plus the replies
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        try (SrqThief thief = new SrqThief(ctx, ctx.endpoints().getFirst().qp)) {
            thief.takeAll();
            log("SRQ emptied by the test's own queue pairs; the streams' senders meet it empty and live on RNR retry.");
            List<CompletableFuture<byte[]>> results = new ArrayList<>();
            int[] xor = new int[2];
            int i = 0;
            for (RpcChannel ch : List.of(a, b)) {
                CompletableFuture<byte[]> result = new CompletableFuture<>();
                StreamObserver<byte[]> req = ClientCalls.asyncClientStreamingCall(ch.newCall(EchoService.COUNT, deadline(120_000)),
                        StreamingRdmaTest.observer(result));
                for (int k = 0; k < perStream; k++) {
                    // every 16th message goes by rendezvous: its BIND_MW (or region) waits in the send queue behind
                    // SENDs the peer answers with RNR NAKs, and must survive the send queue's retry
                    byte[] m = Bytes.pattern(k % 16 == 15 ? RENDEZVOUS_SIZE : 200 + k % 3000, k);
                    for (byte x : m) {
                        xor[i] ^= x;
                    }
                    req.onNext(m);
                }
                req.onCompleted();
                results.add(result);
                i++;
            }
            // The hold is what the test exercises (senders retrying after RNR NAKs while rendezvous binds wait in their
            // send queues: see the transport's README on Soft-RoCE); no assertion depends on how long it lasts.
            Thread.sleep(timeout(100));
            // Certain, whatever the timing: the SRQ has no receive until the thief gives them back, and each stream
            // needs more messages than the whole SRQ held.
            assertTrue(results.stream().noneMatch(CompletableFuture::isDone), "nothing can finish with the SRQ empty");
            thief.giveBack();
            for (int s = 0; s < 2; s++) {
                byte[] r = results.get(s).get(timeout(120_000), TimeUnit.MILLISECONDS);
                assertEquals(perStream, Bytes.intAt(r, 0), "every message of stream " + s + " arrived");
                assertEquals(xor[s], Bytes.intAt(r, 2), "content of stream " + s);
            }
        }
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        log("burst of " + 2 * perStream + " messages against an SRQ of " + depth + ": " + d);
        assertEquals(0, d.completionErrors(), "no RNR retry ran out, no bind failed: " + d);
        assertEquals(2 * (perStream / 16), d.rendezvousSends(), "the large messages went by rendezvous: " + d);
        assertTrue(d.srqLimitEvents() >= 1, "the SRQ limit event fired: " + d);
    }
}
