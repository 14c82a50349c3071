package dev.rdmarpc.transport.rdma.verbs;

/**
 * What INIT→RTR needs to know about the peer (its QPN, start PSN, address) and the receive-side limits.
 *
 * @param remoteQpn       the peer QP's number (24 bits)
 * @param remotePsn       the peer's first send PSN (our {@code rq_psn}, 24 bits)
 * @param remoteGid       the peer's GID; non-null means a GRH (required on RoCE); null means LID routing (IB)
 * @param remoteLid       the peer's LID (IB; 0 on RoCE)
 * @param sgidIndex       our GID table index to send from (RoCE v2 IPv4: the {@code ::ffff:a.b.c.d} entry)
 * @param port            our port number (from 1)
 * @param pathMtu         {@code enum ibv_mtu} value, at most both ports' active MTU
 * @param maxDestRdAtomic RDMA READs/atomics the peer may have outstanding against us
 * @param minRnrTimer     RNR NAK timer code we advertise (e.g. 12 = 0.64 ms)
 * @param hopLimit        GRH hop limit
 * @param trafficClass    GRH traffic class
 * @param serviceLevel    service level
 */
public record RtrParameters(int remoteQpn, int remotePsn, Gid remoteGid, int remoteLid, int sgidIndex, int port,
                            int pathMtu, int maxDestRdAtomic, int minRnrTimer, int hopLimit, int trafficClass,
                            int serviceLevel) {

    /** RoCE defaults: GRH to {@code remoteGid}, max_dest_rd_atomic 16, min_rnr_timer 12, hop limit 64. */
    public static RtrParameters roce(int remoteQpn, int remotePsn, Gid remoteGid, int sgidIndex, int port, int pathMtu) {
        return new RtrParameters(remoteQpn, remotePsn, remoteGid, 0, sgidIndex, port, pathMtu, 16, 12, 64, 0, 0);
    }

    /** A copy with {@code remoteQpn} replaced. */
    public RtrParameters withRemoteQpn(int qpn) {
        return new RtrParameters(qpn, remotePsn, remoteGid, remoteLid, sgidIndex, port, pathMtu, maxDestRdAtomic,
                minRnrTimer, hopLimit, trafficClass, serviceLevel);
    }
}
