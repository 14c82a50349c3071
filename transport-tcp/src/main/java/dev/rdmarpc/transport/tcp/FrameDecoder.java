package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
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
 * The buffer grows with the bytes that have arrived (doubling, up to the frame's size), never with
 * what a header announces, so a peer that sends a header and stalls makes this side hold only what
 * it sent; before HELLO a frame may carry at most {@link #PRE_HELLO_MAX_PAYLOAD} bytes.
 * A large frame ({@link #LAND_AT_LEAST} payload bytes or more) is received into a slab buffer of its payload's size
 * instead, once a quarter of it has arrived: its bytes are copied there once, as they arrive, and the handler gets that
 * buffer as the frame's holder, so it may keep the payload (a whole message) without copying it again.
 * Runs on the connection's I/O thread; not thread-safe.
 */
final class FrameDecoder {
    /**
     * The whole address space, for reading buffers that expose their native address without making a view object
     * per read: headers are read at absolute addresses and each payload is one bounded slice of it.
     */
    static final MemorySegment ALL_MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** A cumulation this much larger than what it holds is swapped for a smaller one. */
    private static final int SHRINK_ABOVE = 1 << 20;
    /** Smallest buffer allocated for pending bytes. */
    static final int MIN_CAPACITY = 256;
    /**
     * Largest payload of the first frame (HELLO), before the peer has said who it is: a HELLO is 22 bytes plus
     * 4 bytes and the contents per capability block (CAP_RDMA is 48), so 16 KiB fits every real one with
     * ample room for future blocks, while an unauthenticated peer can make this side buffer at most that much.
     */
    static final int PRE_HELLO_MAX_PAYLOAD = 16 * 1024;
    /** Payloads of at least this many bytes are received into a slab buffer of their own (when there is a pool). */
    static final int LAND_AT_LEAST = 64 * 1024;

    private final TcpFrameConnection connection;
    /** Where large frames are received; null to keep every frame in the cumulation. */
    private final SlabPool pool;
    /** The payload of the large frame being received, its bytes from offset 0; null when none. */
    private SlabBuffer landing;
    /** Bytes of {@link #landing}'s payload received so far. */
    private int landed;
    private int landingType;
    private int landingFlags;
    private int landingStream;
    private int landingCredit;
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

    /** A decoder for {@code connection}'s bytes that receives large frames into buffers of {@code pool} (null: none). */
    FrameDecoder(TcpFrameConnection connection, SlabPool pool) {
        this.connection = connection;
        this.pool = pool;
    }

    /**
     * Takes {@code in} (releasing it) and delivers every whole frame now buffered, stopping early
     * if the connection starts closing or pauses its reads.
     *
     * @throws RuntimeException from header validation or from the handler; the caller closes the connection
     */
    void decode(ByteBufAllocator alloc, ByteBuf in, FrameHandler handler) {
        if (released) {
            in.release();
            return;
        }
        if (landing != null) {
            land(in);
        }
        if (in.isReadable()) {
            append(alloc, in);
        } else {
            in.release();
        }
        decodeBuffered(alloc, handler);
    }

    /**
     * Delivers every whole frame already buffered (what was left when reads paused), unless a decode is running
     * (it carries on by itself) or nothing is buffered.
     *
     * @throws RuntimeException from header validation or from the handler; the caller closes the connection
     */
    void decodeBuffered(ByteBufAllocator alloc, FrameHandler handler) {
        if (released || decoding || cumulation == null && landing == null) {
            return;
        }
        decoding = true;
        ByteBuf cum = cumulation;
        // Offsets into `view` are `origin + index in cum`: the native address, or one view per read as a fallback.
        MemorySegment view = null;
        long origin = 0;
        try {
            while (!connection.readsPaused()) {
                if (landing != null) {
                    if (landed < landing.length()) {
                        break;
                    }
                    deliverLanded(handler);
                    if (connection.isClosing()) {
                        break;
                    }
                    continue;
                }
                if (cum == null) {
                    break;
                }
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
                    int max = connection.maxInboundPayload();
                    FrameHeader.validate(view, off, first ? Math.min(max, PRE_HELLO_MAX_PAYLOAD) : max, first);
                    pendingPayload = FrameHeader.payloadLength(view, off);
                }
                int frameLength = FrameHeader.SIZE + pendingPayload;
                if (readable < frameLength) {
                    if (pool != null && pendingPayload >= LAND_AT_LEAST && 4L * readable >= frameLength) {
                        startLanding(cum, view, off);
                    }
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

    /**
     * Hands {@code handler} one whole frame made on this side (an HTTP/2 bridge's translation of what its peer sent)
     * as if it had been read, without passing it through the byte stream: when nothing received waits before it (a
     * first frame was decoded, nothing is buffered, no decode is running) and reads are not paused. The frame's header
     * starts {@code frame}'s block and is validated as a read one would be; the handler gets {@code frame} as its
     * payload's holder, so it may keep the payload without a copy. Takes the caller's reference when it returns true
     * or throws; leaves it with the caller (nothing done) when it returns false, and the frame must be decoded behind
     * what waits.
     *
     * @throws RuntimeException from header validation or from the handler; the caller closes the connection
     */
    boolean deliverNow(ByteBufAllocator alloc, SlabBuffer frame, FrameHandler handler) {
        if (!idle()) {
            return false;
        }
        MemorySegment seg = frame.segment();
        decoding = true;
        try {
            FrameHeader.validate(seg, 0, connection.maxInboundPayload(), false);
            handler.onFrame(FrameHeader.type(seg, 0), FrameHeader.flags(seg, 0), FrameHeader.streamId(seg, 0),
                    FrameHeader.credit(seg, 0), frame, FrameHeader.SIZE, FrameHeader.payloadLength(seg, 0));
        } finally {
            frame.release();
            decodingEnded();
        }
        decodeArrived(alloc, handler);
        return true;
    }

    /**
     * {@link #deliverNow(ByteBufAllocator, SlabBuffer, FrameHandler)} for a frame in a Netty buffer with a native
     * address (false for one without): the handler gets a view of its payload, valid during the call only.
     */
    boolean deliverNow(ByteBufAllocator alloc, ByteBuf frame, FrameHandler handler) {
        if (!idle() || !frame.hasMemoryAddress() || frame.readableBytes() < FrameHeader.SIZE) {
            return false;
        }
        long off = frame.memoryAddress() + frame.readerIndex();
        decoding = true;
        try {
            FrameHeader.validate(ALL_MEMORY, off, connection.maxInboundPayload(), false);
            int payload = FrameHeader.payloadLength(ALL_MEMORY, off);
            if (payload != frame.readableBytes() - FrameHeader.SIZE) {
                throw new IllegalStateException("a frame made for core holds " + frame.readableBytes()
                        + " bytes where its header says " + (FrameHeader.SIZE + payload));
            }
            handler.onFrame(FrameHeader.type(ALL_MEMORY, off), FrameHeader.flags(ALL_MEMORY, off),
                    FrameHeader.streamId(ALL_MEMORY, off), FrameHeader.credit(ALL_MEMORY, off), ALL_MEMORY,
                    off + FrameHeader.SIZE, payload);
        } finally {
            frame.release();
            decodingEnded();
        }
        decodeArrived(alloc, handler);
        return true;
    }

    /** Whether the handler is being given a frame now (a call from inside it must not decode again). */
    boolean handingOut() {
        return decoding;
    }

    /** Whether a frame may go to the handler now, ahead of nothing: see {@link #deliverNow}. */
    private boolean idle() {
        return !released && !decoding && !firstFrame && cumulation == null && landing == null
                && !connection.readsPaused() && !connection.isClosing();
    }

    /** After a frame handed over by {@link #deliverNow}, however it ended: frees what a release meanwhile left. */
    private void decodingEnded() {
        decoding = false;
        if (released) {
            freeCumulation();
        }
    }

    /** After a frame handed over by {@link #deliverNow}: decodes what arrived while the handler had it. */
    private void decodeArrived(ByteBufAllocator alloc, FrameHandler handler) {
        if ((cumulation != null || landing != null) && !connection.isClosing()) {
            decodeBuffered(alloc, handler);
        }
    }

    /**
     * Moves the large frame whose header (at {@code off} in {@code view}, validated) starts {@code cum}'s readable
     * bytes, and the part of its payload that is there, into a buffer of the payload's size, leaving {@code cum} empty.
     */
    private void startLanding(ByteBuf cum, MemorySegment view, long off) {
        int payload = pendingPayload;
        SlabBuffer b = pool.allocate(payload);
        b.setLength(payload);
        landingType = FrameHeader.type(view, off);
        landingFlags = FrameHeader.flags(view, off);
        landingStream = FrameHeader.streamId(view, off);
        landingCredit = FrameHeader.credit(view, off);
        int have = cum.readableBytes() - FrameHeader.SIZE;
        MemorySegment.copy(view, off + FrameHeader.SIZE, b.segment(), 0, have);
        cum.skipBytes(cum.readableBytes());
        pendingPayload = -1;
        landing = b;
        landed = have;
    }

    /** Copies what {@code in} holds of the landing frame's payload (as much as it still lacks) into it. */
    private void land(ByteBuf in) {
        int n = Math.min(in.readableBytes(), landing.length() - landed);
        MemorySegment target = landing.segment();
        if (in.hasMemoryAddress()) {
            MemorySegment.copy(ALL_MEMORY, in.memoryAddress() + in.readerIndex(), target, landed, n);
        } else {
            in.getBytes(in.readerIndex(), target.asSlice(landed, n).asByteBuffer());
        }
        in.skipBytes(n);
        landed += n;
    }

    /** Hands the whole landed frame to the handler with its buffer as holder, then drops this side's reference. */
    private void deliverLanded(FrameHandler handler) {
        SlabBuffer b = landing;
        landing = null;
        try {
            handler.onFrame(landingType, landingFlags, landingStream, landingCredit, b, 0, b.length());
        } finally {
            b.release();
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
            cum = alloc.directBuffer(Math.max(in.readableBytes(), MIN_CAPACITY));
            cumulation = cum;
            owned = true;
        } else if (!owned || cum.writableBytes() < in.readableBytes()) {
            cum = moveTo(alloc, grownCapacity(cum.readableBytes() + in.readableBytes()));
        }
        try {
            cum.writeBytes(in);
        } finally {
            in.release();
        }
    }

    /**
     * Capacity for {@code needed} pending bytes: twice that (so a large frame arriving in small reads is copied a
     * bounded number of times in all, not once per read), but no more than the frame being read needs when that
     * is known (all of it once it is at most four times what is there), so the buffer follows the bytes received
     * and never what a header merely announces.
     */
    private int grownCapacity(int needed) {
        long capacity = Math.max(2L * needed, MIN_CAPACITY);
        if (pendingPayload >= 0) {
            long frame = (long) FrameHeader.SIZE + pendingPayload;
            // Within a factor of four of the frame: take its size now rather than one more step just short of it.
            capacity = frame <= 4L * needed ? frame : Math.min(capacity, frame);
        }
        return (int) Math.min(Math.max(capacity, needed), Integer.MAX_VALUE - 8);
    }

    /** Moves the pending bytes to the start of a new owned buffer of {@code capacity} (at least what is pending). */
    private ByteBuf moveTo(ByteBufAllocator alloc, int capacity) {
        ByteBuf old = cumulation;
        ByteBuf cum = alloc.directBuffer(Math.max(capacity, old.readableBytes()));
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

    /**
     * Frees the cumulation when empty; when it holds a little in a much larger buffer (a large owned one, or a
     * read buffer that was adopted and ends in a partial frame), moves that little to a buffer its size.
     */
    private void trim(ByteBufAllocator alloc) {
        ByteBuf cum = cumulation;
        if (cum == null) {
            return;
        }
        int readable = cum.readableBytes();
        if (readable == 0) {
            cumulation = null;
            cum.release();
        } else if (owned ? cum.capacity() > SHRINK_ABOVE && pendingPayload < 0 && readable < SHRINK_ABOVE / 4
                : cum.capacity() > 4 * Math.max(readable, MIN_CAPACITY)) {
            moveTo(alloc, grownCapacity(readable));
        }
    }

    /** Bytes of memory this decoder holds for pending input (the capacity of its buffers), 0 when none. */
    int bufferedCapacity() {
        ByteBuf cum = cumulation;
        SlabBuffer l = landing;
        return (cum == null ? 0 : cum.capacity()) + (l == null ? 0 : l.capacity());
    }

    /** What a close now would leave half-read, for the close reason; null when on a frame boundary. */
    String truncation() {
        if (landing != null) {
            return "truncated frame: the stream ended after " + (FrameHeader.SIZE + landed) + " of the "
                    + (FrameHeader.SIZE + landing.length()) + " bytes of a " + FrameType.name(landingType) + " frame";
        }
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
        SlabBuffer l = landing;
        landing = null;
        if (l != null) {
            l.release();
        }
        ByteBuf cum = cumulation;
        cumulation = null;
        if (cum != null) {
            cum.release();
        }
    }
}
