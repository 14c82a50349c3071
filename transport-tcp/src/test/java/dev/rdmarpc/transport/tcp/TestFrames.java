package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/** Builds frames for tests, as slab buffers ready to send or as raw wire bytes. */
final class TestFrames {
    static final SlabPool POOL = SlabPool.shared();

    private TestFrames() {
    }

    /** One received frame, payload copied out. */
    record Frame(int type, int flags, int streamId, int credit, byte[] payload) {
    }

    /** A whole frame in one slab buffer. */
    static SlabBuffer frame(int type, int flags, int streamId, int credit, byte[] payload) {
        SlabBuffer b = POOL.allocate(FrameHeader.SIZE + payload.length);
        FrameHeader.write(b.segment(), 0, payload.length, type, flags, streamId, credit);
        MemorySegment.copy(payload, 0, b.segment(), ValueLayout.JAVA_BYTE, FrameHeader.SIZE, payload.length);
        b.setLength(FrameHeader.SIZE + payload.length);
        return b;
    }

    /** A MESSAGE frame on {@code streamId}. */
    static SlabBuffer message(int streamId, byte[] payload) {
        return frame(FrameType.MESSAGE, 0, streamId, 0, payload);
    }

    /** A MESSAGE frame on {@code streamId} with {@code room} bytes of front room, as core frames large messages. */
    static SlabBuffer messageWithRoom(int streamId, byte[] payload, int room) {
        SlabBuffer b = POOL.allocate(FrameHeader.SIZE + payload.length, room);
        FrameHeader.write(b.segment(), 0, payload.length, FrameType.MESSAGE, 0, streamId, 0);
        MemorySegment.copy(payload, 0, b.segment(), ValueLayout.JAVA_BYTE, FrameHeader.SIZE, payload.length);
        b.setLength(FrameHeader.SIZE + payload.length);
        return b;
    }

    /** A HELLO frame (the transport does not look into its payload). */
    static SlabBuffer hello() {
        return frame(FrameType.HELLO, 0, 0, 0, new byte[] {1, 2, 3, 4});
    }

    /**
     * A MESSAGE frame as two buffers to send as head and tail: the header plus the first
     * {@code headPayload} payload bytes, then the rest (which must not be empty).
     */
    static SlabBuffer[] split(int streamId, byte[] payload, int headPayload) {
        SlabBuffer head = POOL.allocate(FrameHeader.SIZE + headPayload);
        FrameHeader.write(head.segment(), 0, payload.length, FrameType.MESSAGE, 0, streamId, 0);
        MemorySegment.copy(payload, 0, head.segment(), ValueLayout.JAVA_BYTE, FrameHeader.SIZE, headPayload);
        head.setLength(FrameHeader.SIZE + headPayload);
        int rest = payload.length - headPayload;
        SlabBuffer tail = POOL.allocate(rest);
        MemorySegment.copy(payload, headPayload, tail.segment(), ValueLayout.JAVA_BYTE, 0, rest);
        tail.setLength(rest);
        return new SlabBuffer[] {head, tail};
    }

    /** A frame as the bytes on the wire. */
    static byte[] wire(int type, int flags, int streamId, int credit, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload.length).put((byte) type).put((byte) flags).putShort((short) 0).putInt(streamId).putInt(credit).put(payload);
        return b.array();
    }

    /** A HELLO frame's wire bytes. */
    static byte[] helloWire() {
        return wire(FrameType.HELLO, 0, 0, 0, new byte[] {1, 2, 3, 4});
    }

    /** A frame header claiming {@code length} payload bytes, without the payload. */
    static byte[] headerWire(int type, int streamId, int length) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(length).put((byte) type).put((byte) 0).putShort((short) 0).putInt(streamId).putInt(0);
        return b.array();
    }

    /** The wire bytes of a HELLO then one MESSAGE frame per payload (stream 1, credit = its index). */
    static byte[] messageStream(List<byte[]> payloads) throws IOException {
        ByteArrayOutputStream w = new ByteArrayOutputStream();
        w.write(helloWire());
        for (int i = 0; i < payloads.size(); i++) {
            w.write(wire(FrameType.MESSAGE, 0, 1, i, payloads.get(i)));
        }
        return w.toByteArray();
    }

    /** Bytes {@code [from, to)} of {@code all} as one read: a direct buffer, or a heap one. */
    static ByteBuf piece(byte[] all, int from, int to, boolean direct) {
        if (!direct) {
            return Unpooled.copiedBuffer(all, from, to - from);
        }
        return ByteBufAllocator.DEFAULT.directBuffer(to - from).writeBytes(all, from, to - from);
    }

    /** Deterministic payload bytes for a (sender, sequence) pair, which lead when {@code length >= 8}. */
    static byte[] pattern(int sender, int seq, int length) {
        byte[] p = new byte[length];
        int from = 0;
        if (length >= 8) {
            ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN).putInt(sender).putInt(seq);
            from = 8;
        }
        for (int i = from; i < length; i++) {
            p[i] = (byte) (sender * 31 + seq * 7 + i);
        }
        return p;
    }

    static int sender(byte[] payload) {
        return ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
    }

    static int seq(byte[] payload) {
        return ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN).getInt(4);
    }
}
