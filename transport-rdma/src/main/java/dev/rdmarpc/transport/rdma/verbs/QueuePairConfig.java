package dev.rdmarpc.transport.rdma.verbs;

import java.util.Objects;

/**
 * What {@link ProtectionDomain#createQueuePair} asks for ({@code struct ibv_qp_init_attr}). With an SRQ the receive
 * sizes are ignored.
 *
 * @param type          {@link #TYPE_RC} (the only type the transport uses), {@link #TYPE_UC} or {@link #TYPE_UD}
 * @param sendCq        CQ for send completions
 * @param recvCq        CQ for receive completions (may be the same as sendCq)
 * @param srq           shared receive queue, or null for the QP's own receive queue
 * @param maxSendWr     outstanding send WRs
 * @param maxRecvWr     outstanding receive WRs (no SRQ)
 * @param maxSendSge    gather entries per send WR
 * @param maxRecvSge    scatter entries per receive WR (no SRQ)
 * @param maxInlineData bytes a send may carry inline
 * @param signalAll     whether every send WR completes with a CQE ({@code sq_sig_all})
 */
public record QueuePairConfig(int type, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq,
                              int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData,
                              boolean signalAll) {
    /** {@code IBV_QPT_RC}: reliable connected. */
    public static final int TYPE_RC = 2;
    /** {@code IBV_QPT_UC}: unreliable connected. */
    public static final int TYPE_UC = 3;
    /** {@code IBV_QPT_UD}: unreliable datagram. */
    public static final int TYPE_UD = 4;

    /** Checks the arguments. */
    public QueuePairConfig {
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
    }

    /** An RC QP on one CQ and an SRQ, with explicit send-queue sizing and no {@code sq_sig_all}. */
    public static QueuePairConfig rc(CompletionQueue cq, SharedReceiveQueue srq, int maxSendWr, int maxSendSge,
                                     int maxInlineData) {
        return new QueuePairConfig(TYPE_RC, cq, cq, srq, maxSendWr, 0, maxSendSge, 0, maxInlineData, false);
    }
}
