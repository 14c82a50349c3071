package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.Marshaller;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** A byte[] message and its marshaller, for tests that need exact sizes and contents. */
final class Bytes {
    private Bytes() {
    }

    static final Marshaller<byte[]> MARSHALLER = new Marshaller<>() {
        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target) {
            MemorySegment.copy(value, 0, target, ValueLayout.JAVA_BYTE, 0, value.length);
        }

        @Override
        public byte[] parse(MemorySegment source) {
            return source.toArray(ValueLayout.JAVA_BYTE);
        }
    };

    /**
     * n bytes of a pattern seeded by seed: xorshift noise up to 64 KiB; beyond, that block repeated with each 64 KiB
     * block's index written into its first 8 bytes (fast to make in the slow guest, and still no two blocks alike).
     */
    static byte[] pattern(int n, int seed) {
        int block = Math.min(n, 1 << 16);
        byte[] b = new byte[n];
        int x = seed * 0x9E3779B9 + 1;
        for (int i = 0; i < block; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            b[i] = (byte) x;
        }
        for (int off = block; off < n; off += block) {
            System.arraycopy(b, 0, b, off, Math.min(block, n - off));
            long index = off / block;
            for (int k = 0; k < 8 && off + k < n; k++) {
                b[off + k] = (byte) (index >>> (8 * k));
            }
        }
        return b;
    }

    static byte[] ofInts(int... v) {
        byte[] b = new byte[4 * v.length];
        for (int i = 0; i < v.length; i++) {
            b[4 * i] = (byte) (v[i] >>> 24);
            b[4 * i + 1] = (byte) (v[i] >>> 16);
            b[4 * i + 2] = (byte) (v[i] >>> 8);
            b[4 * i + 3] = (byte) v[i];
        }
        return b;
    }

    static int intAt(byte[] b, int index) {
        int o = 4 * index;
        return ((b[o] & 0xff) << 24) | ((b[o + 1] & 0xff) << 16) | ((b[o + 2] & 0xff) << 8) | (b[o + 3] & 0xff);
    }

    /** Index of the first differing byte, or -1. */
    static int mismatch(byte[] a, byte[] b) {
        return java.util.Arrays.mismatch(a, b);
    }
}
