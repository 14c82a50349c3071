package dev.rdmarpc.core.buffer;

/**
 * A shared slab cut into blocks of one size class. Block handles are made on first use, so a slab of
 * small blocks costs no heap until its blocks are needed. Counts the blocks outside its free list (in a
 * thread cache or in use): at zero the slab can be freed. Guarded by its {@link SmallClassStore}.
 */
final class CarvedSlab {
    final Slab slab;
    private final SlabPool pool;
    private final int sizeClass;
    private final int blockSize;
    private final int blockCount;
    private SlabBuffer freeHead;
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
        this.lastUsedTick = tick;
    }

    boolean hasFree() {
        return freeHead != null || carved < blockCount;
    }

    /** Takes a free block (carving a new handle when none was freed yet); call only when {@link #hasFree()}. */
    SlabBuffer take() {
        SlabBuffer b = freeHead;
        if (b != null) {
            freeHead = b.nextFree; // left stale in b: only read again after put() sets it
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
        b.nextFree = freeHead;
        freeHead = b;
        out--;
    }

    /** True when every block is back in the free list (none in a thread cache, none in use). */
    boolean idle() {
        return out == 0;
    }

    /** Blocks outside the free list. */
    int outstanding() {
        return out;
    }
}
