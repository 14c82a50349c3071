package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

/** A registered memory region ({@code struct ibv_mr *}): the memory, its lkey for local use and rkey for peers. */
public final class MemoryRegion implements RegisteredMemory, AutoCloseable {
    private final ProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment memory;
    private final int access;
    private final int lkey;
    private final int rkey;
    private boolean closed;

    MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment memory, int access) {
        this.pd = pd;
        this.mr = mr;
        this.memory = memory;
        this.access = access;
        this.lkey = mr.get(JAVA_INT, IbvMrStruct.LKEY);
        this.rkey = mr.get(JAVA_INT, IbvMrStruct.RKEY);
    }

    MemorySegment segment() {
        return mr;
    }

    /** The protection domain the region is registered in. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The registered memory. */
    public MemorySegment memory() {
        return memory;
    }

    /** Start address of the region ({@code ibv_mr.addr}). */
    public long address() {
        return mr.get(JAVA_LONG, IbvMrStruct.ADDR);
    }

    /** Length of the region in bytes ({@code ibv_mr.length}). */
    public long length() {
        return mr.get(JAVA_LONG, IbvMrStruct.LENGTH);
    }

    /** Local key, for scatter/gather entries. */
    @Override
    public int lkey() {
        return lkey;
    }

    /** Remote key, for peers' RDMA READ/WRITE (only meaningful with remote access flags). */
    public int rkey() {
        return rkey;
    }

    /** The {@link AccessFlags} it was registered with. */
    public int access() {
        return access;
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Deregisters the region ({@code ibv_dereg_mr}); the memory itself stays the caller's. */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.deregMr(mr);
            closed = true;
        }
    }

    @Override
    public String toString() {
        return "MemoryRegion[addr 0x" + Long.toHexString(memory.address()) + ", " + memory.byteSize() + " bytes, lkey 0x"
                + Integer.toHexString(lkey) + ", rkey 0x" + Integer.toHexString(rkey) + ", "
                + AccessFlags.describe(access) + (closed ? ", closed" : "") + "]";
    }
}
