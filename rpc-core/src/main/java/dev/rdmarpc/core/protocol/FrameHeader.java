package dev.rdmarpc.core.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The one frame layout of the wire protocol, as named offsets over memory. Every frame is a
 * 16-byte header followed by {@code payloadLength} bytes; integers are little-endian.
 *
 * <pre>
 *  0      4    5     6        8          12        16
 *  +------+----+-----+--------+----------+---------+---------...
 *  |length|type|flags|reserved|stream id | credit  | payload
 *  +------+----+-----+--------+----------+---------+---------...
 * </pre>
 */
public final class FrameHeader {
    public static final int LENGTH_OFFSET = 0;
    public static final int TYPE_OFFSET = 4;
    public static final int FLAGS_OFFSET = 5;
    public static final int RESERVED_OFFSET = 6;
    public static final int STREAM_ID_OFFSET = 8;
    public static final int CREDIT_OFFSET = 12;
    /** Header size in bytes. */
    public static final int SIZE = 16;

    /** Hard upper bound of any frame payload, whatever a peer's HELLO says. */
    public static final int MAX_PAYLOAD_LIMIT = 16 << 20;
    /** Payload limit used until the peer's HELLO is read. */
    public static final int DEFAULT_MAX_PAYLOAD = 1 << 20;

    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final byte[] HTTP2_PREFACE = "PRI * HTTP/2.0".getBytes(StandardCharsets.US_ASCII);

    private FrameHeader() {
    }

    /**
     * Writes a header at {@code offset}: as two little-endian longs, the first holding length, type, flags and the zero
     * reserved field at their offsets, the second stream id and credit (two bounds-checked accesses instead of six, on
     * every frame sent).
     */
    public static void write(MemorySegment seg, long offset, int payloadLength, int type, int flags, int streamId, int credit) {
        seg.set(LONG, offset + LENGTH_OFFSET, (payloadLength & 0xFFFF_FFFFL)
                | (long) (type & 0xff) << (8 * TYPE_OFFSET)
                | (long) (flags & 0xff) << (8 * FLAGS_OFFSET)); // RESERVED_OFFSET's two bytes: 0
        seg.set(LONG, offset + STREAM_ID_OFFSET, (streamId & 0xFFFF_FFFFL)
                | (long) credit << (8 * (CREDIT_OFFSET - STREAM_ID_OFFSET)));
    }

    public static int payloadLength(MemorySegment seg, long offset) {
        return seg.get(INT, offset + LENGTH_OFFSET);
    }

    public static int type(MemorySegment seg, long offset) {
        return seg.get(ValueLayout.JAVA_BYTE, offset + TYPE_OFFSET) & 0xff;
    }

    public static int flags(MemorySegment seg, long offset) {
        return seg.get(ValueLayout.JAVA_BYTE, offset + FLAGS_OFFSET) & 0xff;
    }

    public static int reserved(MemorySegment seg, long offset) {
        return seg.get(SHORT, offset + RESERVED_OFFSET) & 0xffff;
    }

    public static int streamId(MemorySegment seg, long offset) {
        return seg.get(INT, offset + STREAM_ID_OFFSET);
    }

    public static int credit(MemorySegment seg, long offset) {
        return seg.get(INT, offset + CREDIT_OFFSET);
    }

    /** Sets the credit field of an already written header (transports piggyback credits here). */
    public static void setCredit(MemorySegment seg, long offset, int credit) {
        seg.set(INT, offset + CREDIT_OFFSET, credit);
    }

    /**
     * Checks a received header before its payload is read: known type, allowed flags, zero
     * reserved bits, a stream id where one is needed, and a length within {@code maxPayload}.
     * {@code first} says whether this is the first frame on the connection, which must be HELLO.
     *
     * @throws ProtocolException naming what is wrong
     */
    public static void validate(MemorySegment seg, long offset, int maxPayload, boolean first) {
        if (first) {
            checkPreface(seg, offset);
        }
        int type = type(seg, offset);
        int len = payloadLength(seg, offset);
        if (!FrameType.isKnown(type)) {
            throw new ProtocolException("unknown frame type " + type);
        }
        if (first && type != FrameType.HELLO) {
            throw new ProtocolException("first frame must be HELLO, got " + FrameType.name(type));
        }
        if (len < 0 || len > maxPayload) {
            throw new ProtocolException("frame length " + Integer.toUnsignedString(len) + " exceeds the maximum "
                    + maxPayload + " (" + FrameType.name(type) + ")");
        }
        int flags = flags(seg, offset);
        if ((flags & ~FrameFlags.allowed(type)) != 0) {
            throw new ProtocolException("flags 0x" + Integer.toHexString(flags) + " not allowed on " + FrameType.name(type));
        }
        if (reserved(seg, offset) != 0) {
            throw new ProtocolException("reserved header bits set on " + FrameType.name(type));
        }
        int streamId = streamId(seg, offset);
        if (FrameType.isStreamFrame(type) ? streamId <= 0 : (streamId != 0 && type != FrameType.WINDOW)) {
            throw new ProtocolException("stream id " + streamId + " not valid on " + FrameType.name(type));
        }
    }

    private static void checkPreface(MemorySegment seg, long offset) {
        boolean http2 = true;
        for (int i = 0; i < Math.min(SIZE, HTTP2_PREFACE.length); i++) {
            if (seg.get(ValueLayout.JAVA_BYTE, offset + i) != HTTP2_PREFACE[i]) {
                http2 = false;
                break;
            }
        }
        if (http2) {
            throw new ProtocolException("peer sent an HTTP/2 connection preface: it speaks gRPC/HTTP2, not the rdmarpc protocol");
        }
        // An HTTP/2 server answers our HELLO with a SETTINGS frame: 3-byte length, type 0x4.
        if (seg.get(ValueLayout.JAVA_BYTE, offset + 3) == 0x04 && type(seg, offset) != FrameType.HELLO
                && (seg.get(ValueLayout.JAVA_BYTE, offset) == 0)) {
            throw new ProtocolException("peer answered with an HTTP/2 SETTINGS frame: it speaks gRPC/HTTP2, not the rdmarpc protocol");
        }
    }

    /** Human-readable header, for logs. */
    public static String describe(MemorySegment seg, long offset) {
        return FrameType.name(type(seg, offset)) + "{stream=" + streamId(seg, offset) + ", flags=0x"
                + Integer.toHexString(flags(seg, offset)) + ", length=" + payloadLength(seg, offset)
                + ", credit=" + credit(seg, offset) + "}";
    }
}
