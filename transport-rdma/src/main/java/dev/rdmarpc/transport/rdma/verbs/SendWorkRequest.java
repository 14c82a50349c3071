package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a preallocated {@code struct ibv_send_wr} with its own scatter/gather array and bad-WR slot.
 * Allocate one per QP (or per posting thread) and reuse it: setting fields and posting allocate nothing.
 * Work requests may be chained with {@link #next(SendWorkRequest)} and posted with one call.
 */
public final class SendWorkRequest {
    // enum ibv_wr_opcode
    /** {@code IBV_WR_RDMA_WRITE}. */
    public static final int OPCODE_RDMA_WRITE = 0;
    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}. */
    public static final int OPCODE_RDMA_WRITE_WITH_IMM = 1;
    /** {@code IBV_WR_SEND}. */
    public static final int OPCODE_SEND = 2;
    /** {@code IBV_WR_SEND_WITH_IMM}. */
    public static final int OPCODE_SEND_WITH_IMM = 3;
    /** {@code IBV_WR_RDMA_READ}. */
    public static final int OPCODE_RDMA_READ = 4;
    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}. */
    public static final int OPCODE_ATOMIC_CMP_AND_SWP = 5;
    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}. */
    public static final int OPCODE_ATOMIC_FETCH_AND_ADD = 6;
    /** {@code IBV_WR_LOCAL_INV}. */
    public static final int OPCODE_LOCAL_INV = 7;
    /** {@code IBV_WR_BIND_MW}. */
    public static final int OPCODE_BIND_MW = 8;
    /** {@code IBV_WR_SEND_WITH_INV}. */
    public static final int OPCODE_SEND_WITH_INV = 9;

    // enum ibv_send_flags
    /** {@code IBV_SEND_FENCE}. */
    public static final int FLAG_FENCE = 1;
    /** {@code IBV_SEND_SIGNALED}: produce a completion. */
    public static final int FLAG_SIGNALED = 1 << 1;
    /** {@code IBV_SEND_SOLICITED}. */
    public static final int FLAG_SOLICITED = 1 << 2;
    /** {@code IBV_SEND_INLINE}: the data is copied at post time (≤ the QP's max_inline_data; no lkey needed). */
    public static final int FLAG_INLINE = 1 << 3;

    private final MemorySegment segment;
    private final MemorySegment wr;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final int maxSge;

    /** Allocates the WR, {@code maxSge} scatter/gather entries and the bad-WR slot in {@code arena}. */
    public SendWorkRequest(Arena arena, int maxSge) {
        if (maxSge <= 0) {
            throw new IllegalArgumentException("maxSge must be positive: " + maxSge);
        }
        this.maxSge = maxSge;
        long sgeBytes = IbvSge.SIZE * maxSge;
        this.segment = arena.allocate(IbvSendWr.SIZE + sgeBytes + ADDRESS.byteSize(), 8);
        this.wr = segment.asSlice(0, IbvSendWr.SIZE);
        this.sges = segment.asSlice(IbvSendWr.SIZE, sgeBytes);
        this.badWr = segment.asSlice(IbvSendWr.SIZE + sgeBytes, ADDRESS.byteSize());
        clear();
    }

    MemorySegment segment() {
        return wr;
    }

    MemorySegment badWrSlot() {
        return badWr;
    }

    /** Zeroes the WR (opcode SEND, no flags, no SGEs, no next) and points it at its own SGE array. */
    public SendWorkRequest clear() {
        wr.fill((byte) 0);
        wr.set(ADDRESS, IbvSendWr.SG_LIST, sges);
        return this;
    }

    /** The caller's id, echoed in the completion. */
    public SendWorkRequest wrId(long wrId) {
        wr.set(JAVA_LONG, IbvSendWr.WR_ID, wrId);
        return this;
    }

    /** One of the {@code OPCODE_*} constants. */
    public SendWorkRequest opcode(int opcode) {
        wr.set(JAVA_INT, IbvSendWr.OPCODE, opcode);
        return this;
    }

    /** {@code FLAG_*} bits ({@code send_flags}). */
    public SendWorkRequest flags(int flags) {
        wr.set(JAVA_INT, IbvSendWr.SEND_FLAGS, flags);
        return this;
    }

    /** Immediate data (host order; written big-endian as the wire wants) for {@code *_WITH_IMM}. */
    public SendWorkRequest immData(int imm) {
        wr.set(CLayouts.BE32, IbvSendWr.IMM_DATA, imm);
        return this;
    }

    /** The rkey to invalidate for {@code LOCAL_INV} / {@code SEND_WITH_INV}. */
    public SendWorkRequest invalidateRkey(int rkey) {
        wr.set(JAVA_INT, IbvSendWr.INVALIDATE_RKEY, rkey);
        return this;
    }

    /** Remote address and rkey for RDMA READ / WRITE. */
    public SendWorkRequest remote(long remoteAddress, int rkey) {
        wr.set(JAVA_LONG, IbvSendWr.RDMA_REMOTE_ADDR, remoteAddress);
        wr.set(JAVA_INT, IbvSendWr.RDMA_RKEY, rkey);
        return this;
    }

    /** Sets scatter/gather entry {@code index} and makes {@code num_sge} at least {@code index + 1}. */
    public SendWorkRequest sge(int index, long address, int length, int lkey) {
        if (index < 0 || index >= maxSge) {
            throw new IndexOutOfBoundsException(index);
        }
        long base = index * IbvSge.SIZE;
        sges.set(JAVA_LONG, base + IbvSge.ADDR, address);
        sges.set(JAVA_INT, base + IbvSge.LENGTH, length);
        sges.set(JAVA_INT, base + IbvSge.LKEY, lkey);
        if (numSge() <= index) {
            wr.set(JAVA_INT, IbvSendWr.NUM_SGE, index + 1);
        }
        return this;
    }

    /** Entry {@code index} covering {@code length} bytes at {@code offset} of a registered region. */
    public SendWorkRequest sge(int index, MemoryRegion mr, long offset, int length) {
        return sge(index, mr.memory().address() + offset, length, mr.lkey());
    }

    /** Sets {@code num_sge} (0 for a zero-length message). */
    public SendWorkRequest numSge(int numSge) {
        if (numSge < 0 || numSge > maxSge) {
            throw new IllegalArgumentException("numSge " + numSge + " not in [0, " + maxSge + "]");
        }
        wr.set(JAVA_INT, IbvSendWr.NUM_SGE, numSge);
        return this;
    }

    /** Chains {@code next} after this WR (null ends the chain). */
    public SendWorkRequest next(SendWorkRequest next) {
        wr.set(ADDRESS, IbvSendWr.NEXT, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }

    /**
     * Makes this a type-2 memory window bind ({@code IBV_WR_BIND_MW}): after it completes, {@code newRkey} grants
     * {@code access} to {@code [address, address + length)} of {@code mr}.
     *
     * @param newRkey usually {@link MemoryWindow#nextRkey(int)} of the window's current rkey
     */
    public SendWorkRequest bindMemoryWindow(MemoryWindow mw, int newRkey, MemoryRegion mr, long address, long length,
                                            int access) {
        opcode(OPCODE_BIND_MW);
        wr.set(JAVA_INT, IbvSendWr.NUM_SGE, 0);
        wr.set(ADDRESS, IbvSendWr.BIND_MW_MW, mw.segment());
        wr.set(JAVA_INT, IbvSendWr.BIND_MW_RKEY, newRkey);
        wr.set(ADDRESS, IbvSendWr.BIND_MW_MR, mr.segment());
        wr.set(JAVA_LONG, IbvSendWr.BIND_MW_ADDR, address);
        wr.set(JAVA_LONG, IbvSendWr.BIND_MW_LENGTH, length);
        wr.set(JAVA_INT, IbvSendWr.BIND_MW_ACCESS, access);
        return this;
    }

    /** {@code wr_id}. */
    public long wrId() {
        return wr.get(JAVA_LONG, IbvSendWr.WR_ID);
    }

    /** {@code opcode}. */
    public int opcode() {
        return wr.get(JAVA_INT, IbvSendWr.OPCODE);
    }

    /** {@code send_flags}. */
    public int flags() {
        return wr.get(JAVA_INT, IbvSendWr.SEND_FLAGS);
    }

    /** {@code num_sge}. */
    public int numSge() {
        return wr.get(JAVA_INT, IbvSendWr.NUM_SGE);
    }

    /** Address of scatter/gather entry {@code index}. */
    public long sgeAddress(int index) {
        return sges.get(JAVA_LONG, checkedSge(index) + IbvSge.ADDR);
    }

    /** Length of scatter/gather entry {@code index}. */
    public int sgeLength(int index) {
        return sges.get(JAVA_INT, checkedSge(index) + IbvSge.LENGTH);
    }

    /** Local key of scatter/gather entry {@code index}. */
    public int sgeLkey(int index) {
        return sges.get(JAVA_INT, checkedSge(index) + IbvSge.LKEY);
    }

    /** Remote address of an RDMA READ / WRITE. */
    public long remoteAddress() {
        return wr.get(JAVA_LONG, IbvSendWr.RDMA_REMOTE_ADDR);
    }

    /** Rkey of an RDMA READ / WRITE. */
    public int remoteRkey() {
        return wr.get(JAVA_INT, IbvSendWr.RDMA_RKEY);
    }

    private long checkedSge(int index) {
        if (index < 0 || index >= maxSge) {
            throw new IndexOutOfBoundsException(index);
        }
        return index * IbvSge.SIZE;
    }

    /** Capacity of the scatter/gather array. */
    public int maxSge() {
        return maxSge;
    }

    /** Total bytes of the first {@code num_sge} entries. */
    public long totalLength() {
        long total = 0;
        for (int i = 0, n = numSge(); i < n; i++) {
            total += Integer.toUnsignedLong(sges.get(JAVA_INT, i * IbvSge.SIZE + IbvSge.LENGTH));
        }
        return total;
    }

    /** Address of the WR the provider rejected in the last failed post ({@code bad_wr}), 0 if none. */
    public long badWrAddress() {
        return badWr.get(ADDRESS, 0).address();
    }

    /** Address of this {@code struct ibv_send_wr}. */
    public long address() {
        return wr.address();
    }

    /** The name of a send opcode, e.g. {@code IBV_WR_SEND_WITH_IMM}. */
    public static String opcodeName(int opcode) {
        return switch (opcode) {
            case OPCODE_RDMA_WRITE -> "IBV_WR_RDMA_WRITE";
            case OPCODE_RDMA_WRITE_WITH_IMM -> "IBV_WR_RDMA_WRITE_WITH_IMM";
            case OPCODE_SEND -> "IBV_WR_SEND";
            case OPCODE_SEND_WITH_IMM -> "IBV_WR_SEND_WITH_IMM";
            case OPCODE_RDMA_READ -> "IBV_WR_RDMA_READ";
            case OPCODE_ATOMIC_CMP_AND_SWP -> "IBV_WR_ATOMIC_CMP_AND_SWP";
            case OPCODE_ATOMIC_FETCH_AND_ADD -> "IBV_WR_ATOMIC_FETCH_AND_ADD";
            case OPCODE_LOCAL_INV -> "IBV_WR_LOCAL_INV";
            case OPCODE_BIND_MW -> "IBV_WR_BIND_MW";
            case OPCODE_SEND_WITH_INV -> "IBV_WR_SEND_WITH_INV";
            default -> "IBV_WR_OPCODE_" + opcode;
        };
    }
}
