package dev.rdmarpc.grpc;

import dev.rdmarpc.core.buffer.SlabBuffer;
import io.grpc.KnownLength;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A received message handed to grpc without copying it out of the slab it arrived in: a byte stream of known length
 * over the slab's bytes (grpc's protobuf marshaller reads a known-length stream in one read into its own buffer,
 * as it does from grpc-netty's buffers). It owns the slab and releases it once, when grpc closes the stream (grpc
 * closes every message it takes, parsed or dropped). Read by one thread at a time.
 */
final class SlabMessageStream extends InputStream implements KnownLength {
    private SlabBuffer slab;
    private final MemorySegment bytes;
    private final int limit;
    private int position;

    SlabMessageStream(SlabBuffer slab) {
        this.slab = slab;
        this.bytes = slab.segment();
        this.limit = slab.length();
    }

    @Override
    public int read() {
        if (slab == null || position >= limit) {
            return -1;
        }
        return bytes.get(ValueLayout.JAVA_BYTE, position++) & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        int n = Math.min(len, available());
        if (n <= 0) {
            return -1;
        }
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, position, b, off, n);
        position += n;
        return n;
    }

    @Override
    public long skip(long n) {
        int k = (int) Math.max(0, Math.min(n, available()));
        position += k;
        return k;
    }

    @Override
    public int available() {
        return slab == null ? 0 : limit - position;
    }

    /** Releases the slab (once); the stream reads as empty afterwards. */
    @Override
    public void close() {
        SlabBuffer s = slab;
        if (s != null) {
            slab = null;
            s.release();
        }
    }
}
