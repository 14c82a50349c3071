package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Decodes short UTF-8 strings that repeat from frame to frame (method paths, the authority) without allocating when
 * the same bytes were decoded recently: a small direct-mapped table from bytes to the string decoded from them. One
 * per connection; not thread-safe (a connection's frames arrive on one thread).
 */
public final class Utf8Cache {
    /** Strings longer than this are decoded every time and not remembered. */
    static final int MAX_CACHED_LENGTH = 256;

    private final byte[][] keys;
    private final String[] values;
    private final int mask;

    /** A cache of {@code slots} entries (rounded up to a power of two). */
    public Utf8Cache(int slots) {
        int n = Integer.highestOneBit(Math.max(1, slots - 1)) << 1;
        keys = new byte[n][];
        values = new String[n];
        mask = n - 1;
    }

    /** The string encoded by {@code len} bytes of {@code seg} at {@code offset}. */
    public String decode(MemorySegment seg, long offset, int len) {
        if (len > MAX_CACHED_LENGTH) {
            return fresh(seg, offset, len);
        }
        int h = len;
        for (int i = 0; i < len; i++) {
            h = 31 * h + seg.get(ValueLayout.JAVA_BYTE, offset + i);
        }
        int slot = (h ^ (h >>> 16)) & mask;
        byte[] k = keys[slot];
        if (k != null && sameBytes(k, seg, offset, len)) {
            return values[slot];
        }
        byte[] b = new byte[len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, offset, b, 0, len);
        String s = new String(b, StandardCharsets.UTF_8);
        keys[slot] = b;
        values[slot] = s;
        return s;
    }

    private static boolean sameBytes(byte[] k, MemorySegment seg, long offset, int len) {
        if (k.length != len) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (k[i] != seg.get(ValueLayout.JAVA_BYTE, offset + i)) {
                return false;
            }
        }
        return true;
    }

    private static String fresh(MemorySegment seg, long offset, int len) {
        byte[] b = new byte[len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, offset, b, 0, len);
        return new String(b, StandardCharsets.UTF_8);
    }
}
