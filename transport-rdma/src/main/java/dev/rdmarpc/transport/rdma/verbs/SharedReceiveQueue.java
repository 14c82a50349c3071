package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A shared receive queue ({@code struct ibv_srq *}) feeding the receives of many QPs. When armed with
 * {@link #armLimit(int)}, the device raises one {@link AsyncEvent#SRQ_LIMIT_REACHED} when fewer than the limit
 * receives remain; re-arm after refilling.
 */
public final class SharedReceiveQueue implements AutoCloseable {
    /** {@code IBV_SRQ_MAX_WR}. */
    static final int ATTR_MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}. */
    static final int ATTR_LIMIT = 1 << 1;

    private final ProtectionDomain pd;
    private final MemorySegment srq;
    private final MemorySegment postFn;
    private final int maxWr;
    private final int maxSge;
    private boolean closed;

    SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq, int maxWr, int maxSge) {
        this.pd = pd;
        this.srq = srq;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.postFn = pd.context().segment().get(ADDRESS, IbvContextStruct.OPS_POST_SRQ_RECV);
    }

    MemorySegment segment() {
        return srq;
    }

    /** Address of the {@code struct ibv_srq} (what SRQ async events name). */
    public long address() {
        return srq.address();
    }

    /** The protection domain. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** Outstanding receive WRs the SRQ holds (as granted by the device). */
    public int maxWr() {
        return maxWr;
    }

    /** Scatter entries per receive WR (as granted). */
    public int maxSge() {
        return maxSge;
    }

    /** Posts a receive WR or chain ({@code ibv_post_srq_recv}, via {@code ops.post_srq_recv}). */
    public void postRecv(ReceiveWorkRequest wr) {
        int errno = tryPostRecv(wr);
        if (errno != 0) {
            throw new VerbsException("ibv_post_srq_recv", errno, errno == Errno.ENOMEM ? "the SRQ is full" : null);
        }
    }

    /** Like {@link #postRecv} but returns the errno (0 = posted; ENOMEM = full) instead of throwing. */
    public int tryPostRecv(ReceiveWorkRequest wr) {
        if (closed) {
            throw new IllegalStateException("shared receive queue is closed");
        }
        return LibIbverbs.postSrqRecv(postFn, srq, wr.segment(), wr.badWrSlot());
    }

    /**
     * Arms the SRQ limit ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}): one
     * {@code IBV_EVENT_SRQ_LIMIT_REACHED} async event when fewer than {@code limit} receives remain.
     */
    public void armLimit(int limit) {
        if (closed) {
            throw new IllegalStateException("shared receive queue is closed");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvSrqAttr.LAYOUT);
            attr.set(JAVA_INT, IbvSrqAttr.SRQ_LIMIT, limit);
            LibIbverbs.modifySrq(srq, attr, ATTR_LIMIT, "limit " + limit);
        }
    }

    /** The current limit ({@code ibv_query_srq}; 0 once the limit event fired). */
    public int queryLimit() {
        if (closed) {
            throw new IllegalStateException("shared receive queue is closed");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvSrqAttr.LAYOUT);
            LibIbverbs.querySrq(srq, attr);
            return attr.get(JAVA_INT, IbvSrqAttr.SRQ_LIMIT);
        }
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Destroys the SRQ ({@code ibv_destroy_srq}); fails with EBUSY while QPs use it. */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.destroySrq(srq);
            closed = true;
        }
    }
}
