package dev.rdmarpc.core.protobuf;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Reads a memory segment as an {@link InputStream}, without copying it first. */
final class SegmentInputStream extends InputStream {
    private final MemorySegment segment;
    private long position;

    SegmentInputStream(MemorySegment segment) {
        this.segment = segment;
    }

    @Override
    public int read() {
        if (position >= segment.byteSize()) {
            return -1;
        }
        return segment.get(ValueLayout.JAVA_BYTE, position++) & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        long left = segment.byteSize() - position;
        if (len == 0) {
            return 0;
        }
        if (left <= 0) {
            return -1;
        }
        int n = (int) Math.min(len, left);
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, position, b, off, n);
        position += n;
        return n;
    }

    @Override
    public long skip(long n) {
        long k = Math.max(0, Math.min(n, segment.byteSize() - position));
        position += k;
        return k;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, segment.byteSize() - position);
    }
}
