package dev.rdmarpc.grpc;

/**
 * A per-thread byte array that outgoing grpc messages are read into before they are copied into their slab: grpc's
 * protobuf stream serializes straight into an array it is given whole (no buffer of its own, as when it is drained
 * into an {@link java.io.OutputStream}). Platform threads only, each keeping one array of at most
 * {@link #MAX_BYTES}; virtual threads, which come and go, get none.
 */
final class SendScratch {
    /** Largest message read through the scratch array; larger ones are drained into the slab directly. */
    static final int MAX_BYTES = 64 * 1024;
    private static final int MIN_BYTES = 1024;

    private static final ThreadLocal<byte[]> ARRAYS = new ThreadLocal<>();

    private SendScratch() {
    }

    /** This thread's array of at least {@code size} bytes, or null when none is kept here (too large, virtual thread). */
    static byte[] forSize(int size) {
        if (size > MAX_BYTES || Thread.currentThread().isVirtual()) {
            return null;
        }
        byte[] a = ARRAYS.get();
        if (a == null || a.length < size) {
            a = new byte[Math.max(MIN_BYTES, Integer.highestOneBit(Math.max(1, size - 1)) << 1)];
            ARRAYS.set(a);
        }
        return a;
    }
}
