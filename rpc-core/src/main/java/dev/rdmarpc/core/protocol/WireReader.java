package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/** A bounds-checked little-endian cursor over a received payload; overruns are protocol errors. */
public final class WireReader {
    private final MemorySegment seg;
    private final String what;
    private long pos;

    public WireReader(MemorySegment seg, String what) {
        this.seg = seg;
        this.what = what;
    }

    private void need(long n) {
        if (n < 0 || pos + n > seg.byteSize()) {
            throw new ProtocolException("truncated " + what + " payload: needs " + (pos + n) + " bytes, has " + seg.byteSize());
        }
    }

    public int u8() {
        need(1);
        return seg.get(ValueLayout.JAVA_BYTE, pos++) & 0xff;
    }

    public int u16() {
        need(2);
        int v = seg.get(FrameHeader.SHORT, pos) & 0xffff;
        pos += 2;
        return v;
    }

    public int i32() {
        need(4);
        int v = seg.get(FrameHeader.INT, pos);
        pos += 4;
        return v;
    }

    public long i64() {
        need(8);
        long v = seg.get(FrameHeader.LONG, pos);
        pos += 8;
        return v;
    }

    public byte[] bytes(int n) {
        need(n);
        byte[] out = new byte[n];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, out, 0, n);
        pos += n;
        return out;
    }

    public String utf8(int n) {
        return new String(bytes(n), StandardCharsets.UTF_8);
    }

    /** Like {@link #utf8(int)}, through a cache of recently decoded strings. */
    public String utf8(int n, Utf8Cache cache) {
        need(n);
        String s = cache.decode(seg, pos, n);
        pos += n;
        return s;
    }

    public String ascii(int n) {
        return new String(bytes(n), StandardCharsets.US_ASCII);
    }

    public MemorySegment slice(long n) {
        need(n);
        MemorySegment s = seg.asSlice(pos, n);
        pos += n;
        return s;
    }

    public long remaining() {
        return seg.byteSize() - pos;
    }

    /** Fails if bytes are left over: every payload must be exactly as long as its fields. */
    public void end() {
        if (pos != seg.byteSize()) {
            throw new ProtocolException(what + " payload has " + (seg.byteSize() - pos) + " trailing bytes");
        }
    }
}
