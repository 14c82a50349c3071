package dev.rdmarpc.core.buffer;

import java.util.ArrayList;
import java.util.List;

/**
 * The shared store of one small size class: the slabs carved for it, each with its own free stack. Thread
 * caches exchange batches with it; threads without a cache (virtual threads) and blocks too large to
 * cache take and give single blocks. One lock per size class, held for one batch at a time. Blocks are
 * taken from the oldest slab that has any, so slabs added under a burst drain and can be freed.
 */
final class SmallClassStore {
    private final SlabPool pool;
    private final int sizeClass;
    private final int blockSize;
    private final ArrayList<CarvedSlab> slabs = new ArrayList<>();

    SmallClassStore(SlabPool pool, int sizeClass) {
        this.pool = pool;
        this.sizeClass = sizeClass;
        this.blockSize = SlabPool.classSize(sizeClass);
    }

    /**
     * Moves up to {@code max} free blocks into {@code dst} from index {@code from}; adds a slab only when no
     * slab has a free block. Returns how many were moved (at least one).
     */
    synchronized int take(SlabBuffer[] dst, int from, int max) {
        int tick = pool.currentTick();
        int got = 0;
        for (int i = 0, n = slabs.size(); i < n && got < max; i++) {
            got += takeFrom(slabs.get(i), dst, from + got, max - got, tick);
        }
        if (got == 0) {
            CarvedSlab s = new CarvedSlab(pool, pool.newSlab(SlabPool.SMALL_SLAB_SIZE), sizeClass, blockSize, tick);
            slabs.add(s);
            got = takeFrom(s, dst, from, max, tick);
        }
        return got;
    }

    private static int takeFrom(CarvedSlab s, SlabBuffer[] dst, int from, int max, int tick) {
        int got = 0;
        while (got < max && s.hasFree()) {
            dst[from + got++] = s.take();
        }
        if (got > 0) {
            s.lastUsedTick = tick;
        }
        return got;
    }

    /** One free block, adding a slab if needed. */
    synchronized SlabBuffer takeOne() {
        int tick = pool.currentTick();
        for (int i = 0, n = slabs.size(); i < n; i++) {
            CarvedSlab s = slabs.get(i);
            if (s.hasFree()) {
                s.lastUsedTick = tick;
                return s.take();
            }
        }
        CarvedSlab s = new CarvedSlab(pool, pool.newSlab(SlabPool.SMALL_SLAB_SIZE), sizeClass, blockSize, tick);
        slabs.add(s);
        return s.take();
    }

    /** Gives back {@code count} blocks of {@code src} from index {@code from}, clearing those entries. */
    synchronized void give(SlabBuffer[] src, int from, int count) {
        int tick = pool.currentTick();
        for (int i = from, end = from + count; i < end; i++) {
            SlabBuffer b = src[i];
            src[i] = null;
            b.home.put(b);
            b.home.lastUsedTick = tick;
        }
    }

    /** Gives back one block. */
    synchronized void giveOne(SlabBuffer b) {
        b.home.put(b);
        b.home.lastUsedTick = pool.currentTick();
    }

    /**
     * Unlinks slabs none of whose blocks is out (in a thread cache or in use) and that have been unused
     * since {@code idleSinceTick} or before, newest first, as long as they fit in {@code maxBytes}; returns
     * the bytes unlinked. The caller frees them: nothing can reach their blocks any more.
     */
    synchronized long removeIdle(int idleSinceTick, long maxBytes, List<Slab> into) {
        long removed = 0;
        for (int i = slabs.size() - 1; i >= 0 && removed + SlabPool.SMALL_SLAB_SIZE <= maxBytes; i--) {
            CarvedSlab s = slabs.get(i);
            if (s.idle() && s.lastUsedTick - idleSinceTick <= 0) {
                slabs.remove(i);
                into.add(s.slab);
                removed += s.slab.size();
            }
        }
        return removed;
    }

    /** Blocks of this class outside the free stacks (in thread caches or in use). */
    synchronized long outstanding() {
        long sum = 0;
        for (CarvedSlab s : slabs) {
            sum += s.outstanding();
        }
        return sum;
    }
}
