package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * A memory window ({@code struct ibv_mw *}): a remotely accessible range of a memory region with its own rkey.
 * <p>Type-2 windows are bound by posting a {@code BIND_MW} send work request
 * ({@link SendWorkRequest#bindMemoryWindow}) with a new rkey from {@link #nextRkey(int)} and invalidated with
 * {@code LOCAL_INV}; the header's {@code ibv_bind_mw} covers type 1 only.
 */
public final class MemoryWindow implements AutoCloseable {
    /** {@code IBV_MW_TYPE_1}. */
    public static final int TYPE_1 = 1;
    /** {@code IBV_MW_TYPE_2}. */
    public static final int TYPE_2 = 2;

    private final ProtectionDomain pd;
    private final MemorySegment mw;
    private boolean closed;

    MemoryWindow(ProtectionDomain pd, MemorySegment mw) {
        this.pd = pd;
        this.mw = mw;
    }

    MemorySegment segment() {
        return mw;
    }

    /** The window's type ({@link #TYPE_1} or {@link #TYPE_2}). */
    public int type() {
        return mw.get(JAVA_INT, IbvMwStruct.TYPE);
    }

    /** The rkey stored in {@code ibv_mw.rkey} (for type 2: the key at allocation; bound keys are the caller's). */
    public int rkey() {
        return mw.get(JAVA_INT, IbvMwStruct.RKEY);
    }

    /**
     * Records {@code rkey} as the window's current key in {@code ibv_mw.rkey} after a type-2 bind was posted with it.
     * Providers differ in whether they read that field: rxe builds the next BIND_MW work request from it and refuses
     * the bind ({@code IBV_WC_MW_BIND_ERR}) unless it names the key the window is bound with now.
     */
    public void recordBoundRkey(int rkey) {
        if (closed) {
            throw new IllegalStateException("memory window is closed");
        }
        mw.set(JAVA_INT, IbvMwStruct.RKEY, rkey);
    }

    /** {@code ibv_inc_rkey}: the same key index with the next 8-bit tag, for the next bind. */
    public static int nextRkey(int rkey) {
        return (rkey & ~0xff) | ((rkey + 1) & 0xff);
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Frees the window ({@code ibv_dealloc_mw}, static inline → {@code ops.dealloc_mw}). */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.deallocMw(pd.context().segment(), mw);
            closed = true;
        }
    }
}
