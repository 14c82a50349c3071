package dev.rdmarpc.transport.rdma.verbs;

/**
 * What RTR→RTS sets: our first send PSN and the retry behaviour.
 *
 * @param sqPsn       our first send PSN (24 bits; the peer's {@code remotePsn})
 * @param timeout     local ACK timeout code: 4.096 µs × 2^timeout (14 ≈ 67 ms; 0 = wait forever)
 * @param retryCount  transport retries before {@code IBV_WC_RETRY_EXC_ERR} (0–7)
 * @param rnrRetry    RNR retries before {@code IBV_WC_RNR_RETRY_EXC_ERR} (0–6, 7 = forever)
 * @param maxRdAtomic RDMA READs/atomics we may have outstanding
 */
public record RtsParameters(int sqPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {

    /** timeout 14, retry 7, RNR retry 7 (forever), max_rd_atomic 16. */
    public static RtsParameters defaults(int sqPsn) {
        return new RtsParameters(sqPsn, 14, 7, 7, 16);
    }
}
