package dev.rdmarpc.transport.rdma.verbs;

/** The queue sizes a QP really got ({@code struct ibv_qp_cap} as {@code ibv_create_qp} returns it). */
public record QueuePairCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
}
