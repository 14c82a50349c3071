package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Named offsets of the RDMA-only frames (docs/PROTOCOL.md, "RDMA data path"): RTS announces a frame whose payload the
 * receiver pulls with RDMA READ, FIN answers it, and a WINDOW on stream 0 carries receive credits alone.
 *
 * <pre>
 * RTS payload (24 bytes)                              FIN payload (4 bytes)
 *  0 type   1 flags  2 reserved(2)  4 length(4)        0 token(4)
 *  8 address(8)     16 rkey(4)     20 token(4)
 * </pre>
 */
final class RendezvousFrames {
    static final int RTS_TYPE = 0;
    static final int RTS_FLAGS = 1;
    static final int RTS_RESERVED = 2;
    static final int RTS_LENGTH = 4;
    static final int RTS_ADDRESS = 8;
    static final int RTS_RKEY = 16;
    static final int RTS_TOKEN = 20;
    static final int RTS_SIZE = 24;
    static final int FIN_TOKEN = 0;
    static final int FIN_SIZE = 4;
    /** Bytes of a whole RTS frame. */
    static final int RTS_FRAME = FrameHeader.SIZE + RTS_SIZE;
    /** Bytes of a whole FIN frame. */
    static final int FIN_FRAME = FrameHeader.SIZE + FIN_SIZE;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RendezvousFrames() {
    }

    /** Writes a whole RTS frame at {@code offset}. */
    static void writeRts(MemorySegment seg, long offset, int streamId, int type, int flags, int length, long address,
                         int rkey, int token) {
        FrameHeader.write(seg, offset, RTS_SIZE, FrameType.RTS, 0, streamId, 0);
        long p = offset + FrameHeader.SIZE;
        seg.set(ValueLayout.JAVA_BYTE, p + RTS_TYPE, (byte) type);
        seg.set(ValueLayout.JAVA_BYTE, p + RTS_FLAGS, (byte) flags);
        seg.set(SHORT, p + RTS_RESERVED, (short) 0);
        seg.set(INT, p + RTS_LENGTH, length);
        seg.set(LONG, p + RTS_ADDRESS, address);
        seg.set(INT, p + RTS_RKEY, rkey);
        seg.set(INT, p + RTS_TOKEN, token);
    }

    /** Writes a whole FIN frame at {@code offset}. */
    static void writeFin(MemorySegment seg, long offset, int streamId, int token) {
        FrameHeader.write(seg, offset, FIN_SIZE, FrameType.FIN, 0, streamId, 0);
        seg.set(INT, offset + FrameHeader.SIZE + FIN_TOKEN, token);
    }

    /** Writes a credit-only frame (WINDOW on stream 0) at {@code offset}. */
    static void writeCredit(MemorySegment seg, long offset, int credits) {
        FrameHeader.write(seg, offset, 0, FrameType.WINDOW, 0, 0, credits);
    }

    static int rtsType(MemorySegment seg, long payload) {
        return seg.get(ValueLayout.JAVA_BYTE, payload + RTS_TYPE) & 0xff;
    }

    static int rtsFlags(MemorySegment seg, long payload) {
        return seg.get(ValueLayout.JAVA_BYTE, payload + RTS_FLAGS) & 0xff;
    }

    static int rtsLength(MemorySegment seg, long payload) {
        return seg.get(INT, payload + RTS_LENGTH);
    }

    static long rtsAddress(MemorySegment seg, long payload) {
        return seg.get(LONG, payload + RTS_ADDRESS);
    }

    static int rtsRkey(MemorySegment seg, long payload) {
        return seg.get(INT, payload + RTS_RKEY);
    }

    static int rtsToken(MemorySegment seg, long payload) {
        return seg.get(INT, payload + RTS_TOKEN);
    }

    static int finToken(MemorySegment seg, long payload) {
        return seg.get(INT, payload + FIN_TOKEN);
    }

    /**
     * Checks an RTS: its own length, the frame it carries (a stream frame other than RTS/FIN, flags that type allows,
     * a payload of 1 byte up to {@code maxPayload}) and the reserved bytes.
     *
     * @throws ProtocolException naming what is wrong
     */
    static void validateRts(MemorySegment seg, long headerOffset, int maxPayload) {
        int len = FrameHeader.payloadLength(seg, headerOffset);
        int streamId = FrameHeader.streamId(seg, headerOffset);
        if (len != RTS_SIZE) {
            throw new ProtocolException("RTS on stream " + streamId + " has a " + len + "-byte payload, not " + RTS_SIZE);
        }
        long p = headerOffset + FrameHeader.SIZE;
        int type = rtsType(seg, p);
        if (!FrameType.isStreamFrame(type) || type == FrameType.RTS || type == FrameType.FIN) {
            throw new ProtocolException("RTS on stream " + streamId + " carries a " + FrameType.name(type)
                    + " frame; only HEADERS, MESSAGE, END_STREAM, TRAILERS and CANCEL may be sent by rendezvous");
        }
        int flags = rtsFlags(seg, p);
        if ((flags & ~FrameFlags.allowed(type)) != 0) {
            throw new ProtocolException("RTS on stream " + streamId + ": flags 0x" + Integer.toHexString(flags)
                    + " not allowed on " + FrameType.name(type));
        }
        if (seg.get(SHORT, p + RTS_RESERVED) != 0) {
            throw new ProtocolException("RTS on stream " + streamId + ": reserved bytes set");
        }
        int length = rtsLength(seg, p);
        if (length <= 0 || length > maxPayload) {
            throw new ProtocolException("RTS on stream " + streamId + " announces a " + Integer.toUnsignedString(length)
                    + "-byte " + FrameType.name(type) + " payload; this side accepts 1 to " + maxPayload + " bytes per frame");
        }
    }
}
