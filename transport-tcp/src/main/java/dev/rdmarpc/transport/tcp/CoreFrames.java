package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

import java.lang.foreign.MemorySegment;

/**
 * rdmarpc frames as bytes, made for core on behalf of an HTTP/2 peer: what an {@link H2Bridge} (or on a client an
 * {@link H2ClientBridge}) hands to the connection's frame decoder in place of the peer's HTTP/2 frames. Control frames come from core's own encoders.
 */
final class CoreFrames {
    private final SlabPool pool;
    private final ByteBufAllocator alloc;

    CoreFrames(SlabPool pool, ByteBufAllocator alloc) {
        this.pool = pool;
        this.alloc = alloc;
    }

    ByteBuf hello(Hello hello) {
        return copy(Frames.hello(pool, hello));
    }

    ByteBuf cancel(int streamId, Status status) {
        return copy(Frames.cancel(pool, streamId, status));
    }

    ByteBuf endStream(int streamId) {
        return copy(Frames.endStream(pool, streamId));
    }

    ByteBuf window(int streamId, int increment) {
        return copy(Frames.window(pool, streamId, increment));
    }

    ByteBuf responseHeaders(int streamId, Metadata md) {
        return copy(Frames.responseHeaders(pool, streamId, md));
    }

    ByteBuf trailers(int streamId, Status status, Metadata md) {
        return copy(Frames.trailers(pool, streamId, status, md));
    }

    ByteBuf goAway(int lastStreamId, Status status) {
        return copy(Frames.goAway(pool, lastStreamId, status));
    }

    ByteBuf connectionWindow(int increment) {
        return copy(Frames.connectionWindow(pool, increment));
    }

    /** A BLOCKED: the bridge's waiting message needs more of core's connection window than is left. */
    ByteBuf connectionBlocked() {
        return copy(Frames.connectionBlocked(pool));
    }

    ByteBuf pingAck(long data) {
        return copy(Frames.ping(pool, data, true));
    }

    /**
     * A MESSAGE frame with {@code length} bytes read from {@code body}; a BEGIN frame starts with the message's total
     * length {@code messageLength}.
     */
    ByteBuf message(int streamId, int flags, long messageLength, ByteBuf body, int length) {
        boolean begin = (flags & FrameFlags.BEGIN) != 0;
        int payload = length + (begin ? 4 : 0);
        ByteBuf b = alloc.buffer(FrameHeader.SIZE + payload);
        header(b, payload, FrameType.MESSAGE, flags, streamId);
        if (begin) {
            b.writeIntLE((int) messageLength);
        }
        b.writeBytes(body, length);
        return b;
    }

    /** A small control frame's payload for core's decoders: in place when it has an address, else a heap copy. */
    static MemorySegment decodable(ByteBuf payload) {
        int n = payload.readableBytes();
        if (payload.hasMemoryAddress()) {
            return MemorySegment.ofAddress(payload.memoryAddress() + payload.readerIndex()).reinterpret(n);
        }
        return MemorySegment.ofArray(ByteBufUtil.getBytes(payload));
    }

    private static void header(ByteBuf b, int payload, int type, int flags, int streamId) {
        b.writeIntLE(payload).writeByte(type).writeByte(flags).writeShortLE(0).writeIntLE(streamId).writeIntLE(0);
    }

    private ByteBuf copy(SlabBuffer frame) {
        try {
            int n = frame.length();
            ByteBuf b = alloc.buffer(n);
            b.writeBytes(frame.segment().asSlice(0, n).asByteBuffer());
            return b;
        } finally {
            frame.release();
        }
    }
}
