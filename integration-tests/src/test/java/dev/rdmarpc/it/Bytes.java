package dev.rdmarpc.it;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/** A byte[] message and its marshaller, for tests that need exact sizes and contents. */
final class Bytes {
    private Bytes() {
    }

    /** Plain bytes: a gzip call's messages are inflated first. */
    static final Marshaller<byte[]> MARSHALLER = new ByteArrayMarshaller(true);
    /** Plain bytes that take no compressed message (the interface's default refusal). */
    static final Marshaller<byte[]> UNCOMPRESSED_ONLY = new ByteArrayMarshaller(false);

    /** Byte arrays as they are; {@code parsesDecompressed} as given. */
    private record ByteArrayMarshaller(boolean parsesDecompressed) implements Marshaller<byte[]> {
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
    }

    /** A method {@code fullName} of this kind with byte-array requests and responses. */
    static MethodDescriptor<byte[], byte[]> method(String fullName, MethodDescriptor.MethodType type) {
        return MethodDescriptor.create(fullName, type, MARSHALLER, MARSHALLER);
    }

    /** n bytes of a recognisable pattern seeded by seed. */
    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 131 + seed);
        }
        return b;
    }

    static byte[] ofInt(int v) {
        return new byte[]{(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    static int toInt(byte[] b) {
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    static boolean same(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }
}
