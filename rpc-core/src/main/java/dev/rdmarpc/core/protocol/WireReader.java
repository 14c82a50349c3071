package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/** A bounds-checked little-endian cursor over a received payload; overruns are protocol errors. */
public final class WireReader {
    private MemorySegment seg;
    private String what;
    private long start;
    private long limit;
    private long pos;

    public WireReader(MemorySegment seg, String what) {
        this(seg, 0, seg.byteSize(), what);
    }

    /** A cursor over {@code length} bytes of {@code seg} from {@code offset}. */
    public WireReader(MemorySegment seg, long offset, long length, String what) {
        reset(seg, offset, length, what);
    }

    /** A cursor over nothing yet, to be pointed at each payload with {@link #reset} (one per reading thread). */
    public WireReader() {
        this(MemorySegment.NULL, 0, 0, "");
    }

    /** Points this cursor at {@code length} bytes of {@code seg} from {@code offset}, naming the payload {@code what}. */
    public WireReader reset(MemorySegment seg, long offset, long length, String what) {
        this.seg = seg;
        this.what = what;
        this.start = offset;
        this.limit = offset + length;
        this.pos = offset;
        return this;
    }

    private void need(long n) {
        if (n < 0 || pos + n > limit) {
            throw new ProtocolException("truncated " + what + " payload: needs " + (pos - start + n) + " bytes, has "
                    + (limit - start));
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

    /** Like {@link #utf8(int)}, through a cache of recently decoded strings (none if null). */
    public String utf8(int n, Utf8Cache cache) {
        if (cache == null) {
            return utf8(n);
        }
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

    /** Steps over {@code n} bytes, which must lie within the payload. */
    public void skip(long n) {
        need(n);
        pos += n;
    }

    public long remaining() {
        return limit - pos;
    }

    /** Fails if bytes are left over: every payload must be exactly as long as its fields. */
    public void end() {
        if (pos != limit) {
            throw new ProtocolException(what + " payload has " + (limit - pos) + " trailing bytes");
        }
    }
}
