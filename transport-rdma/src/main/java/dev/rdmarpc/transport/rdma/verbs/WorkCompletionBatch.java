package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A preallocated array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills; one per poller thread. */
public final class WorkCompletionBatch {
    private final MemorySegment segment;
    private final int capacity;
    private final WorkCompletion flyweight = new WorkCompletion();

    /** Allocates room for {@code capacity} completions in {@code arena}. */
    public WorkCompletionBatch(Arena arena, int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        this.segment = arena.allocate(IbvWc.LAYOUT.byteSize() * capacity, IbvWc.LAYOUT.byteAlignment());
    }

    MemorySegment segment() {
        return segment;
    }

    /** How many completions one poll can return. */
    public int capacity() {
        return capacity;
    }

    /** The batch's single flyweight, moved to completion {@code index} (valid until the next call). */
    public WorkCompletion get(int index) {
        if (index < 0 || index >= capacity) {
            throw new IndexOutOfBoundsException(index);
        }
        return flyweight.wrap(segment, index * IbvWc.SIZE);
    }
}
