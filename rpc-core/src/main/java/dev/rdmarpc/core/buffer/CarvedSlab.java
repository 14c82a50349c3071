package dev.rdmarpc.core.buffer;

import java.util.Arrays;

/**
 * A shared slab cut into blocks of one size class. Block handles are made on first use, so a slab of
 * small blocks costs no heap until its blocks are needed. Its free blocks sit in an array stack (not a
 * list linked through the handles: taking a batch then reads one array instead of chasing handles
 * another thread just wrote). Counts the blocks outside its free stack (in a thread cache or in use): at
 * zero the slab can be freed. Guarded by its {@link SmallClassStore}.
 */
final class CarvedSlab {
    private static final int INITIAL_STACK = 64;

    final Slab slab;
    private final SlabPool pool;
    private final int sizeClass;
    private final int blockSize;
    private final int blockCount;
    private SlabBuffer[] free;
    private int freeCount;
    private int carved;
    private int out;
    /** The pool's trim tick when a block last left or came back. */
    int lastUsedTick;

    CarvedSlab(SlabPool pool, Slab slab, int sizeClass, int blockSize, int tick) {
        this.pool = pool;
        this.slab = slab;
        this.sizeClass = sizeClass;
        this.blockSize = blockSize;
        this.blockCount = (int) (slab.size() / blockSize);
        this.free = new SlabBuffer[Math.min(blockCount, INITIAL_STACK)];
        this.lastUsedTick = tick;
    }

    boolean hasFree() {
        return freeCount > 0 || carved < blockCount;
    }

    /** Takes a free block (carving a new handle when none was freed yet); call only when {@link #hasFree()}. */
    SlabBuffer take() {
        SlabBuffer b;
        if (freeCount > 0) {
            b = free[--freeCount]; // the slot keeps a stale reference: harmless, the slab holds its handles anyway
        } else {
            long offset = (long) carved * blockSize;
            b = new SlabBuffer(pool, slab, slab.segment().asSlice(offset, blockSize), sizeClass, this);
            carved++;
        }
        out++;
        return b;
    }

    /** Takes back a block of this slab. */
    void put(SlabBuffer b) {
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, Math.min(blockCount, free.length * 2));
        }
        free[freeCount++] = b;
        out--;
    }

    /** True when every block is back in the free stack (none in a thread cache, none in use). */
    boolean idle() {
        return out == 0;
    }

    /** Blocks outside the free stack. */
    int outstanding() {
        return out;
    }
}
