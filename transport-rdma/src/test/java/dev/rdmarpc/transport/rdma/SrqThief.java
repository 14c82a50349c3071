package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.CompletionQueue;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;
import dev.rdmarpc.transport.rdma.verbs.ProtectionDomain;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.QueuePairConfig;
import dev.rdmarpc.transport.rdma.verbs.RtrParameters;
import dev.rdmarpc.transport.rdma.verbs.RtsParameters;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletionBatch;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Empties a device context's shared receive queue from the outside, with real verbs: two queue pairs of the test,
 * connected to each other on the context's port, the receiving one on the context's SRQ and both on a completion queue
 * of the test's own. Zero-byte SENDs between them take the SRQ's receives, and the transport's poller never hears of
 * it (their completions are not on its CQ), so it reposts nothing: the SRQ stays empty until {@link #giveBack} hands
 * the taken receives to the poller, which reposts them as after any receive.
 */
final class SrqThief implements AutoCloseable {
    private final RdmaDeviceContext context;
    private final Arena arena = Arena.ofShared();
    private final CompletionQueue cq;
    private final QueuePair sender;
    private final QueuePair receiver;
    private final WorkCompletionBatch batch;
    private final List<Integer> taken = new ArrayList<>();

    /** Builds the pair on the device, PD and SRQ of {@code any}, a queue pair of {@code context}. */
    SrqThief(RdmaDeviceContext context, QueuePair any) {
        this.context = context;
        int depth = context.srqDepth();
        ProtectionDomain pd = any.protectionDomain();
        IbvContext device = any.config().sendCq().context();
        cq = device.createCompletionQueue(2 * depth + 16, null, 0);
        batch = new WorkCompletionBatch(arena, 64);
        sender = pd.createQueuePair(new QueuePairConfig(QueuePairConfig.TYPE_RC, cq, cq, null, depth + 1, 1, 1, 1, 0, false));
        receiver = pd.createQueuePair(QueuePairConfig.rc(cq, any.config().srq(), 1, 1, 0));
        connect(context, sender, receiver, 1);
        connect(context, receiver, sender, 2);
    }

    /** Moves a test's queue pair {@code qp} to RTS towards {@code peer} on {@code context}'s port (psn 1 or 2). */
    static void connect(RdmaDeviceContext context, QueuePair qp, QueuePair peer, int psn) {
        PortAttributes p = context.portAttributes();
        qp.toInit(context.port(), 0);
        qp.toRtr(new RtrParameters(peer.qpNum(), 3 - psn, p.isEthernet() || p.lid() == 0 ? context.gid() : null, p.lid(),
                context.gidIndex(), context.port(), p.activeMtu(), 1, context.config().minRnrTimer(), 64, 0, 0));
        qp.toRts(new RtsParameters(psn, 14, 7, 7, 1));
    }

    /**
     * Takes every receive of the SRQ, which must be full (the transport idle): as many zero-byte SENDs as the SRQ
     * holds, then waits until each has taken a receive.
     */
    void takeAll() {
        RdmaTests.await(30_000, () -> context.postedReceives() == context.srqDepth(),
                () -> "the SRQ full before it is emptied: " + context.postedReceives() + " of " + context.srqDepth());
        SendWorkRequest wr = new SendWorkRequest(arena, 1);
        int n = context.srqDepth();
        for (int i = 0; i < n; i++) {
            wr.clear().wrId(i).opcode(SendWorkRequest.OPCODE_SEND).flags(SendWorkRequest.FLAG_SIGNALED).numSge(0);
            sender.postSend(wr);
        }
        RdmaTests.await(60_000, () -> {
            poll();
            return taken.size() == n;
        }, () -> "the test's SENDs took the SRQ's " + n + " receives: " + taken.size());
    }

    /** On the poller thread: gives every taken receive back to the transport's receive queue, which reposts it. */
    void giveBack() throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.poller().execute(() -> {
            try {
                ReceiveQueue receives = context.receiveQueue();
                for (int slot : taken) {
                    receives.repost(slot, receives.take(slot));
                }
                taken.clear();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        done.get(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
    }

    private void poll() {
        int got = cq.poll(batch);
        for (int i = 0; i < got; i++) {
            WorkCompletion wc = batch.get(i);
            if (wc.status() != WorkCompletion.STATUS_SUCCESS) {
                throw new IllegalStateException("the test's queue pairs failed: " + WorkCompletion.statusName(wc.status()));
            }
            if (wc.qpNum() == receiver.qpNum()) {
                taken.add((int) wc.wrId()); // the wr_id of an SRQ receive is its slot in the transport's receive queue
            }
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
