package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Cuts the bytes core writes to a connection into whole rdmarpc frames, for a bridge that translates each one
 * (core's sends may split a frame, or put several in one buffer). Used on the connection's I/O thread only.
 */
final class CoreFrameSplitter {
    /** Takes one whole frame; its payload (which may be a slice of what core wrote) is released after the call. */
    interface Sink {
        void frame(int type, int flags, int streamId, int credit, ByteBuf payload);
    }

    private final ByteBufAllocator alloc;
    private final CompositeByteBuf pending;

    CoreFrameSplitter(ByteBufAllocator alloc) {
        this.alloc = alloc;
        this.pending = alloc.compositeBuffer(Integer.MAX_VALUE);
    }

    /** Takes {@code bytes} (and owns them) and hands {@code sink} every frame that is now whole. */
    void add(ByteBuf bytes, Sink sink) {
        if (!pending.isReadable()) {
            splitWhole(bytes, sink);
            if (!bytes.isReadable()) {
                bytes.release();
                return;
            }
        }
        pending.addComponent(true, bytes);
        while (pending.readableBytes() >= FrameHeader.SIZE) {
            int start = pending.readerIndex();
            int length = pending.getIntLE(start);
            if (pending.readableBytes() - FrameHeader.SIZE < length) {
                break;
            }
            pending.skipBytes(FrameHeader.SIZE);
            hand(pending, start, take(length), sink); // the header's bytes stay until discardReadComponents below
        }
        pending.discardReadComponents();
    }

    /**
     * Hands {@code sink} the whole frames at the start of {@code bytes} (nothing is pending before them) as slices of it,
     * without going through the composite: the common case of a write holding whole frames. Leaves the rest readable.
     */
    private static void splitWhole(ByteBuf bytes, Sink sink) {
        while (bytes.readableBytes() >= FrameHeader.SIZE) {
            int start = bytes.readerIndex();
            int length = bytes.getIntLE(start);
            if (bytes.readableBytes() - FrameHeader.SIZE < length) {
                return;
            }
            ByteBuf payload = bytes.retainedSlice(start + FrameHeader.SIZE, length);
            bytes.skipBytes(FrameHeader.SIZE + length);
            hand(bytes, start, payload, sink);
        }
    }

    /** Hands {@code sink} the frame whose header is at {@code header} in {@code from}, then releases {@code payload}. */
    private static void hand(ByteBuf from, int header, ByteBuf payload, Sink sink) {
        try {
            sink.frame(from.getUnsignedByte(header + 4), from.getUnsignedByte(header + 5), from.getIntLE(header + 8),
                    from.getIntLE(header + 12), payload);
        } finally {
            payload.release();
        }
    }

    /**
     * Reads the next {@code length} bytes: a retained slice of the buffer core wrote them in when they lie in one (as a
     * MESSAGE payload core sends apart from its header does), else a copy. The composite frees its parts as they are
     * read, so a slice of the composite itself would not do.
     */
    private ByteBuf take(int length) {
        int at = pending.readerIndex();
        if (length > 0) {
            int c = pending.toComponentIndex(at);
            int offset = at - pending.toByteIndex(c);
            ByteBuf part = pending.internalComponent(c);
            if (part.readableBytes() - offset >= length) {
                pending.skipBytes(length);
                return part.retainedSlice(part.readerIndex() + offset, length);
            }
        }
        ByteBuf payload = alloc.buffer(length);
        pending.readBytes(payload, length);
        return payload;
    }

    /** Frees what is held of an unfinished frame. */
    void release() {
        pending.release();
    }
}
