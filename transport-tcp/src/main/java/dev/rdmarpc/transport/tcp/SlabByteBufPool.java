package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;

/**
 * One connection's spare {@link SlabByteBuf} wrappers: a send takes one on whatever thread sends, Netty gives it back
 * on the I/O thread when it releases the written buffer. A small locked stack, because senders are often not Netty
 * threads (whose own recycler only pools for its threads); the lock is held for a few instructions.
 */
final class SlabByteBufPool {
    private final SlabByteBuf[] spare;
    private int count;

    SlabByteBufPool(int capacity) {
        spare = new SlabByteBuf[capacity];
    }

    /** A wrapper (a spare one when there is one) that takes over the caller's reference to {@code buffer}. */
    SlabByteBuf wrap(SlabBuffer buffer) {
        SlabByteBuf w = null;
        synchronized (this) {
            if (count > 0) {
                w = spare[--count];
                spare[count] = null;
            }
        }
        if (w == null) {
            w = new SlabByteBuf(this);
        }
        w.init(buffer);
        return w;
    }

    /**
     * A wrapper over memory the transport does not own (native, possibly read-only): Netty reads it in place, and its
     * release runs {@code done} instead of releasing a slab buffer.
     */
    SlabByteBuf wrapForeign(java.lang.foreign.MemorySegment body, Runnable done) {
        SlabByteBuf w = null;
        synchronized (this) {
            if (count > 0) {
                w = spare[--count];
                spare[count] = null;
            }
        }
        if (w == null) {
            w = new SlabByteBuf(this);
        }
        w.initForeign(body, done);
        return w;
    }

    /** Keeps a released wrapper for reuse, unless enough are kept already. */
    void giveBack(SlabByteBuf w) {
        synchronized (this) {
            if (count < spare.length) {
                spare[count++] = w;
            }
        }
    }

    /** Spare wrappers kept now. */
    synchronized int spareCount() {
        return count;
    }
}
