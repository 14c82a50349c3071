package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.lang.foreign.MemorySegment;

/**
 * Cuts one connection's byte stream into frames: keeps what has arrived in a single contiguous
 * direct buffer, validates each header as soon as its 16 bytes are there (so an oversize length
 * or a first frame that is not HELLO is refused before its payload arrives), and hands each whole
 * frame to the {@link FrameHandler} with a view of its payload that is valid during the call only.
 * Runs on the connection's I/O thread; not thread-safe.
 */
final class FrameDecoder {
    /**
     * The whole address space, for reading buffers that expose their native address without making a view object
     * per read: headers are read at absolute addresses and each payload is one bounded slice of it.
     */
    private static final MemorySegment ALL_MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** A cumulation this much larger than what it holds is swapped for a smaller one. */
    private static final int SHRINK_ABOVE = 1 << 20;

    private final TcpFrameConnection connection;
    /** Bytes received and not yet decoded, from its reader index; null when there are none. */
    private ByteBuf cumulation;
    /** Whether {@link #cumulation} was allocated here (so it may be written into) or adopted from a read. */
    private boolean owned;
    private boolean firstFrame = true;
    /** Payload length of the header at the reader index once validated, or -1. */
    private int pendingPayload = -1;
    /** Set while frames are being handed out, so that a release from inside a handler waits for the loop. */
    private boolean decoding;
    private boolean released;

    FrameDecoder(TcpFrameConnection connection) {
        this.connection = connection;
    }

    /**
     * Takes {@code in} (releasing it) and delivers every whole frame now buffered, stopping early
     * if the connection starts closing.
     *
     * @throws RuntimeException from header validation or from the handler; the caller closes the connection
     */
    void decode(ByteBufAllocator alloc, ByteBuf in, FrameHandler handler) {
        if (released) {
            in.release();
            return;
        }
        append(alloc, in);
        decoding = true;
        ByteBuf cum = cumulation;
        // Offsets into `view` are `origin + index in cum`: the native address, or one view per read as a fallback.
        MemorySegment view = null;
        long origin = 0;
        try {
            while (true) {
                int start = cum.readerIndex();
                int readable = cum.readableBytes();
                if (readable < FrameHeader.SIZE) {
                    break;
                }
                if (view == null) {
                    if (cum.hasMemoryAddress()) {
                        view = ALL_MEMORY;
                        origin = cum.memoryAddress();
                    } else {
                        int base = cum.readerIndex();
                        view = MemorySegment.ofBuffer(cum.nioBuffer(base, cum.writerIndex() - base));
                        origin = -base;
                    }
                }
                long off = origin + start;
                if (pendingPayload < 0) {
                    boolean first = firstFrame;
                    firstFrame = false;
                    FrameHeader.validate(view, off, connection.maxInboundPayload(), first);
                    pendingPayload = FrameHeader.payloadLength(view, off);
                }
                int frameLength = FrameHeader.SIZE + pendingPayload;
                if (readable < frameLength) {
                    reserve(alloc, frameLength);
                    break;
                }
                int type = FrameHeader.type(view, off);
                int flags = FrameHeader.flags(view, off);
                int streamId = FrameHeader.streamId(view, off);
                int credit = FrameHeader.credit(view, off);
                int payloadLength = pendingPayload;
                pendingPayload = -1;
                cum.readerIndex(start + frameLength);
                handler.onFrame(type, flags, streamId, credit, view, off + FrameHeader.SIZE, payloadLength);
                if (connection.isClosing()) {
                    break;
                }
            }
        } finally {
            decoding = false;
            if (released) {
                freeCumulation();
            } else {
                trim(alloc);
            }
        }
    }

    /** Adds a read to the cumulation, adopting it without a copy when nothing is pending. */
    private void append(ByteBufAllocator alloc, ByteBuf in) {
        ByteBuf cum = cumulation;
        if (cum == null) {
            if (in.isDirect() && in.isContiguous()) {
                cumulation = in;
                owned = false;
                return;
            }
            cum = alloc.directBuffer(Math.max(in.readableBytes(), 256));
            cumulation = cum;
            owned = true;
        } else if (!owned || cum.writableBytes() < in.readableBytes()) {
            cum = grow(alloc, cum.readableBytes() + in.readableBytes());
        }
        try {
            cum.writeBytes(in);
        } finally {
            in.release();
        }
    }

    /** Makes room for a whole frame of {@code frameLength} bytes now, instead of growing read by read. */
    private void reserve(ByteBufAllocator alloc, int frameLength) {
        ByteBuf cum = cumulation;
        if (cum.capacity() - cum.readerIndex() < frameLength || !owned) {
            grow(alloc, frameLength);
        }
    }

    /** Moves the pending bytes into a new owned buffer of at least {@code minCapacity}. */
    private ByteBuf grow(ByteBufAllocator alloc, int minCapacity) {
        ByteBuf old = cumulation;
        int wanted = Math.max(minCapacity, old.readableBytes());
        if (pendingPayload >= 0) {
            wanted = Math.max(wanted, FrameHeader.SIZE + pendingPayload);
        }
        ByteBuf cum = alloc.directBuffer(Math.max(wanted, 256));
        try {
            cum.writeBytes(old, old.readerIndex(), old.readableBytes());
        } catch (RuntimeException | Error e) {
            cum.release();
            throw e;
        }
        old.release();
        cumulation = cum;
        owned = true;
        return cum;
    }

    /** Frees the cumulation when empty, or a large one holding little. */
    private void trim(ByteBufAllocator alloc) {
        ByteBuf cum = cumulation;
        if (cum == null) {
            return;
        }
        if (!cum.isReadable()) {
            cumulation = null;
            cum.release();
        } else if (owned && cum.capacity() > SHRINK_ABOVE && pendingPayload < 0 && cum.readableBytes() < SHRINK_ABOVE / 4) {
            grow(alloc, cum.readableBytes());
        }
    }

    /** What a close now would leave half-read, for the close reason; null when on a frame boundary. */
    String truncation() {
        ByteBuf cum = cumulation;
        if (cum == null || !cum.isReadable()) {
            return null;
        }
        int have = cum.readableBytes();
        if (have < FrameHeader.SIZE) {
            return "truncated frame: the stream ended after " + have + " of the " + FrameHeader.SIZE + " header bytes";
        }
        if (pendingPayload < 0) {
            return "truncated frame: the stream ended with " + have + " bytes not decoded";
        }
        MemorySegment header = MemorySegment.ofBuffer(cum.nioBuffer(cum.readerIndex(), FrameHeader.SIZE));
        return "truncated frame: the stream ended after " + have + " of the " + (FrameHeader.SIZE + pendingPayload)
                + " bytes of a " + FrameType.name(FrameHeader.type(header, 0)) + " frame";
    }

    /** Frees what is buffered; the decoder is not used afterwards. */
    void release() {
        released = true;
        if (!decoding) {
            freeCumulation();
        }
    }

    private void freeCumulation() {
        ByteBuf cum = cumulation;
        cumulation = null;
        if (cum != null) {
            cum.release();
        }
    }
}
