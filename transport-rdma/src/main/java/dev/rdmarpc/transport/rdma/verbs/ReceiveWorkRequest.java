package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a preallocated {@code struct ibv_recv_wr} with its own scatter/gather array and bad-WR slot,
 * for {@link SharedReceiveQueue#postRecv} and {@link QueuePair#postRecv}; reuse it, nothing allocates.
 */
public final class ReceiveWorkRequest {
    private final MemorySegment wr;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final int maxSge;

    /** Allocates the WR, {@code maxSge} scatter/gather entries and the bad-WR slot in {@code arena}. */
    public ReceiveWorkRequest(Arena arena, int maxSge) {
        if (maxSge <= 0) {
            throw new IllegalArgumentException("maxSge must be positive: " + maxSge);
        }
        this.maxSge = maxSge;
        long sgeBytes = IbvSge.SIZE * maxSge;
        MemorySegment segment = arena.allocate(IbvRecvWr.SIZE + sgeBytes + ADDRESS.byteSize(), 8);
        this.wr = segment.asSlice(0, IbvRecvWr.SIZE);
        this.sges = segment.asSlice(IbvRecvWr.SIZE, sgeBytes);
        this.badWr = segment.asSlice(IbvRecvWr.SIZE + sgeBytes, ADDRESS.byteSize());
        clear();
    }

    MemorySegment segment() {
        return wr;
    }

    MemorySegment badWrSlot() {
        return badWr;
    }

    /** Zeroes the WR (no SGEs, no next) and points it at its own SGE array. */
    public ReceiveWorkRequest clear() {
        wr.fill((byte) 0);
        wr.set(ADDRESS, IbvRecvWr.SG_LIST, sges);
        return this;
    }

    /** The caller's id, echoed in the completion. */
    public ReceiveWorkRequest wrId(long wrId) {
        wr.set(JAVA_LONG, IbvRecvWr.WR_ID, wrId);
        return this;
    }

    /** Sets scatter entry {@code index} and makes {@code num_sge} at least {@code index + 1}. */
    public ReceiveWorkRequest sge(int index, long address, int length, int lkey) {
        if (index < 0 || index >= maxSge) {
            throw new IndexOutOfBoundsException(index);
        }
        long base = index * IbvSge.SIZE;
        sges.set(JAVA_LONG, base + IbvSge.ADDR, address);
        sges.set(JAVA_INT, base + IbvSge.LENGTH, length);
        sges.set(JAVA_INT, base + IbvSge.LKEY, lkey);
        if (numSge() <= index) {
            wr.set(JAVA_INT, IbvRecvWr.NUM_SGE, index + 1);
        }
        return this;
    }

    /** Entry {@code index} covering {@code length} bytes at {@code offset} of a registered region. */
    public ReceiveWorkRequest sge(int index, MemoryRegion mr, long offset, int length) {
        return sge(index, mr.memory().address() + offset, length, mr.lkey());
    }

    /** Sets {@code num_sge}. */
    public ReceiveWorkRequest numSge(int numSge) {
        if (numSge < 0 || numSge > maxSge) {
            throw new IllegalArgumentException("numSge " + numSge + " not in [0, " + maxSge + "]");
        }
        wr.set(JAVA_INT, IbvRecvWr.NUM_SGE, numSge);
        return this;
    }

    /** Chains {@code next} after this WR (null ends the chain). */
    public ReceiveWorkRequest next(ReceiveWorkRequest next) {
        wr.set(ADDRESS, IbvRecvWr.NEXT, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }

    /** {@code wr_id}. */
    public long wrId() {
        return wr.get(JAVA_LONG, IbvRecvWr.WR_ID);
    }

    /** {@code num_sge}. */
    public int numSge() {
        return wr.get(JAVA_INT, IbvRecvWr.NUM_SGE);
    }

    /** Address of the WR the provider rejected in the last failed post, 0 if none. */
    public long badWrAddress() {
        return badWr.get(ADDRESS, 0).address();
    }

    /** Address of this {@code struct ibv_recv_wr}. */
    public long address() {
        return wr.address();
    }
}
