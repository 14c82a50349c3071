package dev.rdmarpc.core.protobuf;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Heap arrays that lent messages are parsed into, given back on release and handed out again without the JVM zeroing
 * them: power-of-two size classes from {@link #MIN_ARRAY} to {@link #MAX_POOLED}, at most {@code budgetBytes} kept in
 * all. An array nobody gives back is only garbage, collected as any other; a larger array than the largest class is
 * allocated and dropped as usual. With {@code poison} each array given back is filled with {@link #FREED_BYTE} first,
 * so that whatever still reads a released message reads that (tests run so, through {@code rdmarpc.slab.trackLeaks}).
 * <p>Each size class has its own lock, held only to push or pop one array; the bytes kept are an atomic count.
 */
final class LentArrays {
    /** Smallest array handed out. */
    static final int MIN_ARRAY = 8 << 10;
    /** Largest array kept for reuse. */
    static final int MAX_POOLED = 64 << 20;
    /** What an array is filled with when given back to a poisoning pool. */
    static final byte FREED_BYTE = (byte) 0xDB;

    private static final int MIN_SHIFT = Integer.numberOfTrailingZeros(MIN_ARRAY);
    private static final int CLASSES = Integer.numberOfTrailingZeros(MAX_POOLED) - MIN_SHIFT + 1;
    /** What the shared pool keeps at most: a sixteenth of the heap's maximum, and no more than 256 MiB. */
    static final long SHARED_BUDGET = Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 16);
    private static final LentArrays SHARED = new LentArrays(SHARED_BUDGET, Boolean.getBoolean("rdmarpc.slab.trackLeaks"));

    private final long budgetBytes;
    private final boolean poison;
    private final ArrayDeque<byte[]>[] free;
    private final AtomicLong keptBytes = new AtomicLong();

    @SuppressWarnings("unchecked")
    LentArrays(long budgetBytes, boolean poison) {
        this.budgetBytes = budgetBytes;
        this.poison = poison;
        this.free = new ArrayDeque[CLASSES];
        for (int c = 0; c < CLASSES; c++) {
            free[c] = new ArrayDeque<>();
        }
    }

    /** The pool every {@link LendingMarshaller} uses unless given its own, keeping {@link #SHARED_BUDGET} at most. */
    static LentArrays shared() {
        return SHARED;
    }

    private static int classOf(int size) {
        return size <= MIN_ARRAY ? 0 : 32 - Integer.numberOfLeadingZeros(size - 1) - MIN_SHIFT;
    }

    /** An array of at least {@code size} bytes whose contents are whatever it held before. */
    byte[] take(int size) {
        int c = classOf(size);
        if (c >= CLASSES) {
            return new byte[size];
        }
        byte[] array;
        ArrayDeque<byte[]> stack = free[c];
        synchronized (stack) {
            array = stack.pollFirst();
        }
        if (array == null) {
            return new byte[MIN_ARRAY << c];
        }
        keptBytes.addAndGet(-array.length);
        return array;
    }

    /** Takes back an array from {@link #take}; drops it when the pool keeps its budget already. */
    void give(byte[] array) {
        int c = classOf(array.length);
        if (c >= CLASSES || array.length != MIN_ARRAY << c) {
            return;
        }
        if (keptBytes.addAndGet(array.length) > budgetBytes) {
            keptBytes.addAndGet(-array.length);
            return;
        }
        if (poison) {
            java.util.Arrays.fill(array, FREED_BYTE);
        }
        ArrayDeque<byte[]> stack = free[c];
        synchronized (stack) {
            stack.addFirst(array);
        }
    }

    /** Bytes of arrays kept for reuse. */
    long keptBytes() {
        return keptBytes.get();
    }
}
