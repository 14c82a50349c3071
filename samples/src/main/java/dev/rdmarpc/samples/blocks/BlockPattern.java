package dev.rdmarpc.samples.blocks;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The contents a new store starts with: every 8-byte word is a mix of its own offset in the store, so a block read
 * from the wrong place, or a piece of one, does not match.
 */
public final class BlockPattern {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private BlockPattern() {
    }

    /** The word at byte {@code offset} (a multiple of 8) of the store. */
    static long wordAt(long offset) {
        long z = offset + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Fills {@code target} (a whole number of words) with the store's bytes from byte {@code storeOffset} on. */
    public static void fill(MemorySegment target, long storeOffset) {
        if (target.byteSize() % 8 != 0 || storeOffset % 8 != 0) {
            throw new IllegalArgumentException("the pattern is filled in whole 8-byte words");
        }
        for (long i = 0; i < target.byteSize(); i += 8) {
            target.set(WORD, i, wordAt(storeOffset + i));
        }
    }
}
