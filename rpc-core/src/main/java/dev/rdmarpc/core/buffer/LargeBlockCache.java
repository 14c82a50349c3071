package dev.rdmarpc.core.buffer;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Freed large blocks (a slab each) kept for reuse, per size class, up to a byte budget. The most recently
 * freed block is reused first, so the oldest ones stay unused and are the first a trim frees.
 */
final class LargeBlockCache {
    private final ArrayDeque<SlabBuffer>[] free;
    private final int firstClass;
    private final long maxBytes;
    private long cachedBytes;

    @SuppressWarnings("unchecked")
    LargeBlockCache(int firstClass, int classCount, long maxBytes) {
        this.firstClass = firstClass;
        this.maxBytes = maxBytes;
        this.free = (ArrayDeque<SlabBuffer>[]) new ArrayDeque<?>[classCount - firstClass];
        for (int i = 0; i < free.length; i++) {
            free[i] = new ArrayDeque<>();
        }
    }

    /** A kept block of class {@code c}, or null. */
    synchronized SlabBuffer take(int c) {
        SlabBuffer b = free[c - firstClass].pollLast();
        if (b != null) {
            cachedBytes -= b.capacity();
        }
        return b;
    }

    /** Keeps a freed block unless that would pass the budget; returns whether it was kept. */
    synchronized boolean offer(SlabBuffer b, int tick) {
        if (cachedBytes + b.capacity() > maxBytes) {
            return false;
        }
        b.releasedAtTick = tick;
        free[b.sizeClass() - firstClass].addLast(b);
        cachedBytes += b.capacity();
        return true;
    }

    /**
     * Removes kept blocks released at {@code idleSinceTick} or before, largest class first, as long as they
     * fit in {@code maxBytes}, adding their slabs to {@code into} for the caller to free; returns the bytes removed.
     */
    synchronized long removeIdle(int idleSinceTick, long maxBytes, List<Slab> into) {
        long removed = 0;
        for (int i = free.length - 1; i >= 0; i--) {
            ArrayDeque<SlabBuffer> q = free[i];
            while (!q.isEmpty() && removed + q.peekFirst().capacity() <= maxBytes
                    && q.peekFirst().releasedAtTick - idleSinceTick <= 0) {
                SlabBuffer b = q.pollFirst();
                cachedBytes -= b.capacity();
                removed += b.capacity();
                into.add(b.slab());
            }
        }
        return removed;
    }

    /** Bytes of the blocks kept. */
    synchronized long cachedBytes() {
        return cachedBytes;
    }
}
