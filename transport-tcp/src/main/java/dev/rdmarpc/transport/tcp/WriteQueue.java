package dev.rdmarpc.transport.tcp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Sends made off the I/O thread, waiting for it: a lock-free stack linked through the buffers
 * themselves (no allocation per send), taken whole and handed out oldest first. Any number of
 * threads may push; any number may take, each getting a disjoint batch.
 */
final class WriteQueue {
    private static final VarHandle TOP;

    static {
        try {
            TOP = MethodHandles.lookup().findVarHandle(WriteQueue.class, "top", SlabByteBuf.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through TOP
    private volatile SlabByteBuf top;

    /** Adds one send (the head buffer, with its {@code tail} already set). */
    void push(SlabByteBuf head) {
        SlabByteBuf t;
        do {
            t = top;
            head.next = t;
        } while (!TOP.compareAndSet(this, t, head));
    }

    boolean isEmpty() {
        return top == null;
    }

    /** Removes every send pushed so far; returns the oldest, linked to the newer ones through {@code next}, or null. */
    SlabByteBuf takeAll() {
        if (top == null) {
            return null;
        }
        SlabByteBuf newest = (SlabByteBuf) TOP.getAndSet(this, null);
        SlabByteBuf oldest = null;
        while (newest != null) {
            SlabByteBuf n = newest.next;
            newest.next = oldest;
            oldest = newest;
            newest = n;
        }
        return oldest;
    }

    /** Bytes of every send (heads and tails) of a batch from {@link #takeAll}. */
    static long bytes(SlabByteBuf batch) {
        long n = 0;
        for (SlabByteBuf b = batch; b != null; b = b.next) {
            n += b.readableBytes();
            if (b.tail != null) {
                n += b.tail.readableBytes();
            }
        }
        return n;
    }

    /** Releases every buffer of a batch from {@link #takeAll} without sending it. */
    static void releaseAll(SlabByteBuf batch) {
        while (batch != null) {
            SlabByteBuf n = batch.next;
            SlabByteBuf t = batch.tail;
            batch.next = null;
            batch.tail = null;
            batch.release();
            if (t != null) {
                t.release();
            }
            batch = n;
        }
    }
}
