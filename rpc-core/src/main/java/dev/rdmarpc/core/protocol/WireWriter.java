package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** A little-endian cursor writing into a segment sized beforehand by the encoder. */
public final class WireWriter {
    private final MemorySegment seg;
    private long pos;

    public WireWriter(MemorySegment seg, long start) {
        this.seg = seg;
        this.pos = start;
    }

    public WireWriter u8(int v) {
        seg.set(ValueLayout.JAVA_BYTE, pos++, (byte) v);
        return this;
    }

    public WireWriter u16(int v) {
        seg.set(FrameHeader.SHORT, pos, (short) v);
        pos += 2;
        return this;
    }

    public WireWriter i32(int v) {
        seg.set(FrameHeader.INT, pos, v);
        pos += 4;
        return this;
    }

    public WireWriter i64(long v) {
        seg.set(FrameHeader.LONG, pos, v);
        pos += 8;
        return this;
    }

    public WireWriter bytes(byte[] b) {
        MemorySegment.copy(b, 0, seg, ValueLayout.JAVA_BYTE, pos, b.length);
        pos += b.length;
        return this;
    }

    public long position() {
        return pos;
    }
}
