package dev.rdmarpc.core.buffer;

import java.lang.ref.WeakReference;

/**
 * One platform thread's small bounded stacks of free blocks, one per cached size class. Only the owner
 * touches the stacks, so allocating and releasing take no lock: an empty stack is refilled with half its
 * capacity from the class's {@link SmallClassStore}, a full one gives half back. Another thread may only
 * ask for a flush ({@link #requestFlush()}), which the owner does the next time it goes to a shared store
 * (the flag is read there only, to keep it off the fast path); once the owner has ended,
 * {@link #flushIfOwnerEnded()} gives everything back from any thread.
 */
final class ThreadCache {
    /** Bytes a thread may keep of one size class, at most. */
    static final int BYTES_PER_CLASS = 256 << 10;
    /** Blocks a thread may keep of one size class, at most. */
    static final int MAX_BLOCKS_PER_CLASS = 64;

    private final SmallClassStore[] stores;
    private final SlabBuffer[][] stacks;
    private final int[] counts;
    private final WeakReference<Thread> owner;
    /** The owner's {@link Thread#threadId()}, which no other thread ever has. */
    final long ownerId;
    private volatile boolean flushRequested;

    ThreadCache(SmallClassStore[] stores, int cachedClasses, Thread owner) {
        this.stores = stores;
        this.stacks = new SlabBuffer[cachedClasses][];
        this.counts = new int[cachedClasses];
        for (int c = 0; c < cachedClasses; c++) {
            stacks[c] = new SlabBuffer[capacity(c)];
        }
        this.owner = new WeakReference<>(owner);
        this.ownerId = owner.threadId();
    }

    /** How many blocks of size class {@code c} a thread keeps at most. */
    static int capacity(int c) {
        return Math.max(2, Math.min(MAX_BLOCKS_PER_CLASS, BYTES_PER_CLASS / SlabPool.classSize(c)));
    }

    /** A free block of class {@code c}; owner thread only. */
    SlabBuffer allocate(int c) {
        SlabBuffer[] stack = stacks[c];
        int n = counts[c];
        if (n == 0) {
            if (flushRequested) {
                flush();
            }
            n = stores[c].take(stack, 0, stack.length >>> 1);
        }
        n--;
        SlabBuffer b = stack[n];
        stack[n] = null;
        counts[c] = n;
        return b;
    }

    /** Keeps a freed block of class {@code c}, giving half the stack back first when it is full; owner thread only. */
    void release(SlabBuffer b, int c) {
        SlabBuffer[] stack = stacks[c];
        int n = counts[c];
        if (n == stack.length) {
            if (flushRequested) {
                flush();
                n = 0;
            } else {
                int keep = stack.length >>> 1;
                stores[c].give(stack, keep, n - keep);
                n = keep;
            }
        }
        stack[n] = b;
        counts[c] = n + 1;
    }

    /** Gives every kept block back to the shared stores; owner thread only (or once the owner has ended). */
    void flush() {
        flushRequested = false;
        for (int c = 0; c < stacks.length; c++) {
            int n = counts[c];
            if (n > 0) {
                stores[c].give(stacks[c], 0, n);
                counts[c] = 0;
            }
        }
    }

    /** Asks the owner to give its blocks back the next time it refills or gives back a stack. */
    void requestFlush() {
        flushRequested = true;
    }

    /** True once the owning thread has ended (its cache can then be flushed from any thread). */
    boolean ownerEnded() {
        Thread t = owner.get();
        return t == null || !t.isAlive();
    }

    /** Flushes if the owner has ended; returns whether it had. */
    boolean flushIfOwnerEnded() {
        if (!ownerEnded()) {
            return false;
        }
        flush();
        return true;
    }
}
