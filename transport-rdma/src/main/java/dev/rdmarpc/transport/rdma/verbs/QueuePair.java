package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * A queue pair ({@code struct ibv_qp *}): state transitions RESET→INIT→RTR→RTS (and →ERR) with
 * {@code ibv_modify_qp}, and posting through {@code ibv_context.ops} ({@code post_send} / {@code post_recv} are
 * static inline in the header). Posting allocates nothing; one posting thread per {@link SendWorkRequest}.
 */
public final class QueuePair implements SendQueueTarget, AutoCloseable {
    // enum ibv_qp_attr_mask
    static final int ATTR_STATE = 1;
    static final int ATTR_CUR_STATE = 1 << 1;
    static final int ATTR_ACCESS_FLAGS = 1 << 3;
    static final int ATTR_PKEY_INDEX = 1 << 4;
    static final int ATTR_PORT = 1 << 5;
    static final int ATTR_QKEY = 1 << 6;
    static final int ATTR_AV = 1 << 7;
    static final int ATTR_PATH_MTU = 1 << 8;
    static final int ATTR_TIMEOUT = 1 << 9;
    static final int ATTR_RETRY_CNT = 1 << 10;
    static final int ATTR_RNR_RETRY = 1 << 11;
    static final int ATTR_RQ_PSN = 1 << 12;
    static final int ATTR_MAX_QP_RD_ATOMIC = 1 << 13;
    static final int ATTR_MIN_RNR_TIMER = 1 << 15;
    static final int ATTR_SQ_PSN = 1 << 16;
    static final int ATTR_MAX_DEST_RD_ATOMIC = 1 << 17;
    static final int ATTR_CAP = 1 << 19;
    static final int ATTR_DEST_QPN = 1 << 20;

    static final int MASK_INIT = ATTR_STATE | ATTR_PKEY_INDEX | ATTR_PORT | ATTR_ACCESS_FLAGS;
    static final int MASK_RTR = ATTR_STATE | ATTR_AV | ATTR_PATH_MTU | ATTR_DEST_QPN | ATTR_RQ_PSN
            | ATTR_MAX_DEST_RD_ATOMIC | ATTR_MIN_RNR_TIMER;
    static final int MASK_RTS = ATTR_STATE | ATTR_TIMEOUT | ATTR_RETRY_CNT | ATTR_RNR_RETRY | ATTR_SQ_PSN
            | ATTR_MAX_QP_RD_ATOMIC;

    private final ProtectionDomain pd;
    private final MemorySegment qp;
    private final QueuePairConfig config;
    private final QueuePairCaps caps;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final int qpNum;
    private boolean closed;

    QueuePair(ProtectionDomain pd, MemorySegment qp, QueuePairConfig config, QueuePairCaps caps) {
        this.pd = pd;
        this.qp = qp;
        this.config = config;
        this.caps = caps;
        MemorySegment ctx = pd.context().segment();
        this.postSendFn = ctx.get(ADDRESS, IbvContextStruct.OPS_POST_SEND);
        this.postRecvFn = ctx.get(ADDRESS, IbvContextStruct.OPS_POST_RECV);
        this.qpNum = qp.get(JAVA_INT, IbvQpStruct.QP_NUM);
    }

    MemorySegment segment() {
        return qp;
    }

    /** Address of the {@code struct ibv_qp} (what QP async events name). */
    public long address() {
        return qp.address();
    }

    /** The QP number the peer addresses (24 bits). */
    @Override
    public int qpNum() {
        return qpNum;
    }

    /** The inline size the device granted ({@code max_inline_data}). */
    @Override
    public int maxInlineData() {
        return caps.maxInlineData();
    }

    /** The protection domain. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** What was asked for at creation. */
    public QueuePairConfig config() {
        return config;
    }

    /** What the device granted at creation (e.g. the real {@code max_inline_data}). */
    public QueuePairCaps caps() {
        return caps;
    }

    /** The state the library last recorded ({@code ibv_qp.state}); {@link #queryState()} asks the device. */
    public int cachedState() {
        return qp.get(JAVA_INT, IbvQpStruct.STATE);
    }

    /** The current state ({@code ibv_query_qp}); e.g. ERR after a fatal completion error. */
    public int queryState() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvQpAttr.LAYOUT);
            MemorySegment init = arena.allocate(IbvQpInitAttr.LAYOUT);
            LibIbverbs.queryQp(qp, attr, ATTR_STATE, init);
            return attr.get(JAVA_INT, IbvQpAttr.QP_STATE);
        }
    }

    /** RESET→INIT: port, P_Key index 0 and the remote access the QP grants ({@link AccessFlags}). */
    public void toInit(int port, int accessFlags) {
        modify("INIT", MASK_INIT, attr -> {
            attr.set(JAVA_INT, IbvQpAttr.QP_STATE, QpState.INIT);
            attr.set(JAVA_SHORT, IbvQpAttr.PKEY_INDEX, (short) 0);
            attr.set(JAVA_BYTE, IbvQpAttr.PORT_NUM, (byte) port);
            attr.set(JAVA_INT, IbvQpAttr.QP_ACCESS_FLAGS, accessFlags);
        });
    }

    /** INIT→RTR: the peer's QPN, PSN and address, path MTU, responder limits. */
    public void toRtr(RtrParameters p) {
        modify("RTR", MASK_RTR, attr -> {
            attr.set(JAVA_INT, IbvQpAttr.QP_STATE, QpState.RTR);
            attr.set(JAVA_INT, IbvQpAttr.PATH_MTU, p.pathMtu());
            attr.set(JAVA_INT, IbvQpAttr.DEST_QP_NUM, p.remoteQpn());
            attr.set(JAVA_INT, IbvQpAttr.RQ_PSN, p.remotePsn() & 0xffffff);
            attr.set(JAVA_BYTE, IbvQpAttr.MAX_DEST_RD_ATOMIC, (byte) p.maxDestRdAtomic());
            attr.set(JAVA_BYTE, IbvQpAttr.MIN_RNR_TIMER, (byte) p.minRnrTimer());
            attr.set(JAVA_SHORT, IbvQpAttr.AH_DLID, (short) p.remoteLid());
            attr.set(JAVA_BYTE, IbvQpAttr.AH_SL, (byte) p.serviceLevel());
            attr.set(JAVA_BYTE, IbvQpAttr.AH_SRC_PATH_BITS, (byte) 0);
            attr.set(JAVA_BYTE, IbvQpAttr.AH_STATIC_RATE, (byte) 0);
            attr.set(JAVA_BYTE, IbvQpAttr.AH_PORT_NUM, (byte) p.port());
            if (p.remoteGid() != null) {
                attr.set(JAVA_BYTE, IbvQpAttr.AH_IS_GLOBAL, (byte) 1);
                p.remoteGid().write(attr, IbvQpAttr.AH_DGID);
                attr.set(JAVA_INT, IbvQpAttr.AH_FLOW_LABEL, 0);
                attr.set(JAVA_BYTE, IbvQpAttr.AH_SGID_INDEX, (byte) p.sgidIndex());
                attr.set(JAVA_BYTE, IbvQpAttr.AH_HOP_LIMIT, (byte) p.hopLimit());
                attr.set(JAVA_BYTE, IbvQpAttr.AH_TRAFFIC_CLASS, (byte) p.trafficClass());
            }
        });
    }

    /** RTR→RTS: our first PSN, ACK timeout, retry counts, outstanding RDMA READs. */
    public void toRts(RtsParameters p) {
        modify("RTS", MASK_RTS, attr -> {
            attr.set(JAVA_INT, IbvQpAttr.QP_STATE, QpState.RTS);
            attr.set(JAVA_INT, IbvQpAttr.SQ_PSN, p.sqPsn() & 0xffffff);
            attr.set(JAVA_BYTE, IbvQpAttr.TIMEOUT, (byte) p.timeout());
            attr.set(JAVA_BYTE, IbvQpAttr.RETRY_CNT, (byte) p.retryCount());
            attr.set(JAVA_BYTE, IbvQpAttr.RNR_RETRY, (byte) p.rnrRetry());
            attr.set(JAVA_BYTE, IbvQpAttr.MAX_RD_ATOMIC, (byte) p.maxRdAtomic());
        });
    }

    /** Any state→ERR: outstanding WRs complete with {@code IBV_WC_WR_FLUSH_ERR}. */
    @Override
    public void toError() {
        modify("ERR", ATTR_STATE, attr -> attr.set(JAVA_INT, IbvQpAttr.QP_STATE, QpState.ERR));
    }

    /** Any state→RESET (empties the queues; the QP can be connected again from INIT). */
    public void toReset() {
        modify("RESET", ATTR_STATE, attr -> attr.set(JAVA_INT, IbvQpAttr.QP_STATE, QpState.RESET));
    }

    private void modify(String what, int mask, Consumer<MemorySegment> fill) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvQpAttr.LAYOUT);
            fill.accept(attr);
            LibIbverbs.modifyQp(qp, attr, mask, what);
        }
    }

    /** Posts a send WR or chain ({@code ibv_post_send}, via {@code ops.post_send}); throws on failure. */
    public void postSend(SendWorkRequest wr) {
        int errno = tryPostSend(wr);
        if (errno != 0) {
            throw new VerbsException("ibv_post_send(" + SendWorkRequest.opcodeName(wr.opcode()) + ")", errno,
                    errno == Errno.ENOMEM ? "the send queue is full"
                            : errno == Errno.EINVAL ? "bad WR (too many SGEs, inline data over max_inline_data "
                            + caps.maxInlineData() + ", or QP not in RTS)" : null);
        }
    }

    /** Like {@link #postSend} but returns the errno (0 = posted; ENOMEM = queue full) instead of throwing. */
    @Override
    public int tryPostSend(SendWorkRequest wr) {
        if (closed) {
            throw new IllegalStateException("queue pair " + qpNum + " is closed");
        }
        return LibIbverbs.postSend(postSendFn, qp, wr.segment(), wr.badWrSlot());
    }

    /** Posts a receive WR or chain to the QP's own receive queue ({@code ibv_post_recv}); not with an SRQ. */
    public void postRecv(ReceiveWorkRequest wr) {
        if (closed) {
            throw new IllegalStateException("queue pair " + qpNum + " is closed");
        }
        int errno = LibIbverbs.postRecv(postRecvFn, qp, wr.segment(), wr.badWrSlot());
        if (errno != 0) {
            throw new VerbsException("ibv_post_recv", errno, config.srq() != null ? "the QP uses an SRQ" : null);
        }
    }

    /**
     * Binds a type-1 window ({@code ibv_bind_mw}, via {@code ops.bind_mw}); the rkey is then {@link MemoryWindow#rkey()}.
     * Type-2 windows are bound with {@link SendWorkRequest#bindMemoryWindow}.
     */
    public void bindType1Window(MemoryWindow mw, long wrId, int sendFlags, MemoryRegion mr, long address, long length,
                                int access) {
        ensureOpen();
        if (mw.type() != MemoryWindow.TYPE_1) {
            throw new VerbsException("ibv_bind_mw", Errno.EINVAL, "only type-1 windows; bind type 2 with a BIND_MW send WR");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bind = arena.allocate(IbvMwBind.LAYOUT);
            bind.set(JAVA_LONG, IbvMwBind.WR_ID, wrId);
            bind.set(JAVA_INT, IbvMwBind.SEND_FLAGS, sendFlags);
            bind.set(ADDRESS, IbvMwBind.MR, mr.segment());
            bind.set(JAVA_LONG, IbvMwBind.ADDR, address);
            bind.set(JAVA_LONG, IbvMwBind.LENGTH, length);
            bind.set(JAVA_INT, IbvMwBind.ACCESS, access);
            int errno = LibIbverbs.bindMw(pd.context().segment(), qp, mw.segment(), bind);
            if (errno != 0) {
                throw new VerbsException("ibv_bind_mw", errno);
            }
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("queue pair " + qpNum + " is closed");
        }
        pd.ensureOpen();
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Destroys the QP ({@code ibv_destroy_qp}); acknowledge its async events first. */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.destroyQp(qp);
            closed = true;
        }
    }

    @Override
    public String toString() {
        return "QueuePair[qpn " + qpNum + (closed ? ", closed" : ", " + QpState.name(cachedState())) + "]";
    }
}
