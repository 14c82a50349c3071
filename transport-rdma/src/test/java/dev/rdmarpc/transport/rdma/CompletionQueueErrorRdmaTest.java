package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static dev.rdmarpc.transport.rdma.RdmaTests.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.transport.rdma.verbs.CompletionQueue;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;
import dev.rdmarpc.transport.rdma.verbs.ProtectionDomain;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.QueuePairConfig;
import dev.rdmarpc.transport.rdma.verbs.ReceiveWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;

import java.lang.foreign.Arena;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code IBV_EVENT_CQ_ERR} on the transport's device context, raised by the device itself: the test adds a completion
 * queue of a few entries to the context, with two queue pairs of its own on it, and posts more SENDs between them than
 * the queue can hold without ever polling it, so the device overruns it and reports a CQ error on the context's
 * asynchronous event channel (Soft-RoCE does so from {@code rxe_cq_post}). The transport's own CQs are sized for every
 * work request they can receive, so only a device fault overruns them; the transport treats a CQ error on its context
 * as one of the CQs its connections share: every connection of the context closes (the call in flight fails with
 * UNAVAILABLE long before its deadline), it counts as one device fault (the device reports the overrun once per
 * completion it could not post), the context is retired and closed once nothing
 * uses it, and the next connection opens the device again and uses RDMA. Slabs, regions and queue pairs end at baseline.
 */
@Tag("rdma")
class CompletionQueueErrorRdmaTest extends RdmaEndToEndBase {

    @Test
    void aCompletionQueueErrorClosesTheContextsConnectionsAndTheNextConnectionOpensTheDeviceAgain() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] req = Bytes.pattern(4096, 7);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        RdmaDeviceContext context = RdmaTests.context();
        QueuePair any = context.endpoints().getFirst().qp;
        CompletableFuture<byte[]> hanging = ClientCalls.futureUnaryCall(ch.newCall(EchoService.HANG,
                CallOptions.DEFAULT.withDeadlineAfter(timeout(120_000), TimeUnit.MILLISECONDS)), new byte[1]);
        RdmaTests.await(10_000, () -> service.hangCalls.get() == 1, () -> "the HANG call reached its handler");
        long faultsBefore = RdmaMetrics.DEVICE_FAULTS.sum();

        // the test's queue pairs live on the context's protection domain: a reservation keeps the context open until
        // they are gone, as a connection's does
        assertTrue(context.tryReserve(), "room on the context for the test's queue pairs");
        try (Overrun overrun = new Overrun(context, any)) {
            long t0 = System.nanoTime();
            overrun.post();
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> hanging.get(timeout(60_000), TimeUnit.MILLISECONDS));
            Status status = ((StatusException) e.getCause()).getStatus();
            log("a CQ of " + overrun.capacity() + " entries overrun: the call in flight ended after "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms with " + status);
            assertEquals(Status.Code.UNAVAILABLE, status.getCode(), "failed by the CQ error, not by its deadline");
            assertEquals(faultsBefore + 1, RdmaMetrics.DEVICE_FAULTS.sum(),
                    "counted as one device fault, however many CQ errors the device reported");
            assertTrue(context.isRetired(), "the context is retired");
        } finally {
            context.unreserve();
        }
        RdmaTests.await(60_000, context::isClosed, () -> "the retired context closed: queue pairs " + context.queuePairs());

        RpcChannel next = channel();
        assertEquals(-1, Bytes.mismatch(req, echo(next, req, 30_000)));
        assertRdma(next);
        assertTrue(RdmaTests.context() != context, "the next connection opened the device again");
        log("after the CQ error: a new context, the next connection on RDMA");
    }

    /**
     * Two connected queue pairs of the test on one small completion queue of the context's device that nobody polls:
     * {@link #post()} makes twice as many completions as it holds.
     */
    private static final class Overrun implements AutoCloseable {
        private final Arena arena = Arena.ofShared();
        private final CompletionQueue cq;
        private final QueuePair sender;
        private final QueuePair receiver;
        private final int count;

        /** Builds the pair on the device and protection domain of {@code any}, a queue pair of {@code context}. */
        Overrun(RdmaDeviceContext context, QueuePair any) {
            ProtectionDomain pd = any.protectionDomain();
            IbvContext device = any.config().sendCq().context();
            cq = device.createCompletionQueue(4, null, 0);
            count = cq.capacity() + 4; // SENDs; with their receives, twice that many completions
            sender = pd.createQueuePair(new QueuePairConfig(QueuePairConfig.TYPE_RC, cq, cq, null, count, 1, 1, 1, 0, false));
            receiver = pd.createQueuePair(new QueuePairConfig(QueuePairConfig.TYPE_RC, cq, cq, null, 1, count, 1, 1, 0, false));
            SrqThief.connect(context, sender, receiver, 1);
            SrqThief.connect(context, receiver, sender, 2);
        }

        int capacity() {
            return cq.capacity();
        }

        /** Posts as many zero-byte receives and signalled zero-byte SENDs as {@code count}. */
        void post() {
            ReceiveWorkRequest recv = new ReceiveWorkRequest(arena, 1);
            for (int i = 0; i < count; i++) {
                receiver.postRecv(recv.clear().wrId(i).numSge(0));
            }
            SendWorkRequest send = new SendWorkRequest(arena, 1);
            for (int i = 0; i < count; i++) {
                sender.postSend(send.clear().wrId(i).opcode(SendWorkRequest.OPCODE_SEND).flags(SendWorkRequest.FLAG_SIGNALED)
                        .numSge(0));
            }
        }

        @Override
        public void close() {
            receiver.close();
            sender.close();
            cq.close();
            arena.close();
        }
    }
}
