package dev.rdmarpc.core.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One page-aligned off-heap region that {@link SlabBuffer}s are carved from. A transport may
 * register it once (the RDMA transport registers it as a memory region) and keep what it needs
 * in the attachment.
 */
public final class Slab {
    private final Arena arena;
    private final MemorySegment segment;
    private volatile Object attachment;

    @SuppressWarnings("MustBeClosedChecker") // the arena lives as long as the slab: free() closes it
    Slab(long size) {
        this.arena = Arena.ofShared();
        this.segment = arena.allocate(size, SlabPool.PAGE_SIZE);
    }

    /** The whole region. */
    public MemorySegment segment() {
        return segment;
    }

    /** The region's base address. */
    public long address() {
        return segment.address();
    }

    public long size() {
        return segment.byteSize();
    }

    /** What a transport stored here when it registered the slab (e.g. its memory region), or null. */
    public Object attachment() {
        return attachment;
    }

    public void attach(Object value) {
        this.attachment = value;
    }

    void free() {
        arena.close();
    }
}
