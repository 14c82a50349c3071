package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A protection domain ({@code struct ibv_pd *}): registers memory and creates SRQs, QPs and memory windows. */
public final class ProtectionDomain implements AutoCloseable {
    private final IbvContext context;
    private final MemorySegment pd;
    private boolean closed;

    ProtectionDomain(IbvContext context, MemorySegment pd) {
        this.context = context;
        this.pd = pd;
    }

    MemorySegment segment() {
        return pd;
    }

    /** The device context the PD belongs to. */
    public IbvContext context() {
        return context;
    }

    /** Kernel handle of the PD. */
    public int handle() {
        return pd.get(JAVA_INT, IbvPdStruct.HANDLE);
    }

    /**
     * Registers {@code memory} (a native segment; page-aligned is best) with {@link AccessFlags} {@code access}
     * ({@code ibv_reg_mr}). Needs enough RLIMIT_MEMLOCK; the failure says so.
     */
    public MemoryRegion registerMemory(MemorySegment memory, int access) {
        ensureOpen();
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native (off-heap) memory can be registered");
        }
        return new MemoryRegion(this, LibIbverbs.regMr(pd, memory, memory.byteSize(), access), memory, access);
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param maxWr  minimum number of outstanding receive WRs
     * @param maxSge scatter entries per receive WR
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(IbvSrqAttr.INIT_LAYOUT);
            init.set(ADDRESS, IbvSrqAttr.INIT_SRQ_CONTEXT, MemorySegment.NULL);
            init.set(JAVA_INT, IbvSrqAttr.INIT_ATTR + IbvSrqAttr.MAX_WR, maxWr);
            init.set(JAVA_INT, IbvSrqAttr.INIT_ATTR + IbvSrqAttr.MAX_SGE, maxSge);
            init.set(JAVA_INT, IbvSrqAttr.INIT_ATTR + IbvSrqAttr.SRQ_LIMIT, 0);
            MemorySegment srq = LibIbverbs.createSrq(pd, init);
            return new SharedReceiveQueue(this, srq,
                    init.get(JAVA_INT, IbvSrqAttr.INIT_ATTR + IbvSrqAttr.MAX_WR),
                    init.get(JAVA_INT, IbvSrqAttr.INIT_ATTR + IbvSrqAttr.MAX_SGE));
        }
    }

    /** Creates a queue pair ({@code ibv_create_qp}) in state RESET. */
    public QueuePair createQueuePair(QueuePairConfig config) {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(IbvQpInitAttr.LAYOUT);
            init.set(ADDRESS, IbvQpInitAttr.QP_CONTEXT, MemorySegment.NULL);
            init.set(ADDRESS, IbvQpInitAttr.SEND_CQ, config.sendCq().segment());
            init.set(ADDRESS, IbvQpInitAttr.RECV_CQ, config.recvCq().segment());
            init.set(ADDRESS, IbvQpInitAttr.SRQ, config.srq() == null ? MemorySegment.NULL : config.srq().segment());
            init.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR, config.maxSendWr());
            init.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR, config.srq() == null ? config.maxRecvWr() : 0);
            init.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE, config.maxSendSge());
            init.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE, config.srq() == null ? config.maxRecvSge() : 0);
            init.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA, config.maxInlineData());
            init.set(JAVA_INT, IbvQpInitAttr.QP_TYPE, config.type());
            init.set(JAVA_INT, IbvQpInitAttr.SQ_SIG_ALL, config.signalAll() ? 1 : 0);
            MemorySegment qp = LibIbverbs.createQp(pd, init);
            QueuePairCaps caps = new QueuePairCaps(
                    init.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR),
                    init.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR),
                    init.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE),
                    init.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE),
                    init.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA));
            return new QueuePair(this, qp, config, caps);
        }
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}, static inline → {@code ops.alloc_mw}).
     *
     * @param type {@link MemoryWindow#TYPE_1} or {@link MemoryWindow#TYPE_2}
     */
    public MemoryWindow allocMemoryWindow(int type) {
        ensureOpen();
        return new MemoryWindow(this, LibIbverbs.allocMw(context.segment(), pd, type));
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("protection domain is closed");
        }
        context.ensureOpen();
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Deallocates the PD ({@code ibv_dealloc_pd}); fails with EBUSY while MRs, QPs, SRQs or MWs still use it. */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.deallocPd(pd);
            closed = true;
        }
    }
}
