package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;

import java.lang.foreign.MemorySegment;

/**
 * Serializes a message straight into a slab laid out as the first MESSAGE frame expects:
 * {@code [header 16][total length 4][message bytes]}. A message sent in one frame goes out as
 * this buffer unchanged; a longer one goes out as slices of it (see {@link OutboundFlow}).
 */
public final class MessageFramer {
    /** Bytes before the message: frame header and the total-length prefix. */
    static final int PREFIX = FrameHeader.SIZE + 4;
    /**
     * Bytes a frame larger than a page starts past the start of its block (blocks of a page or more start on a page;
     * see {@link #allocate}). They are the frame buffer's {@link SlabBuffer#frontRoom()}: a transport may put a small
     * frame sent just before it there, so that the two leave as one contiguous write (the TCP transport does that with
     * a request's HEADERS).
     */
    static final int LARGE_FRAME_SKEW = 256;
    private static final java.lang.foreign.ValueLayout.OfInt LENGTH =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private MessageFramer() {
    }

    /** The framed message; buffer length = PREFIX + message size. Header is written by the sender. */
    static <T> SlabBuffer frame(SlabPool pool, Marshaller<T> marshaller, T message) {
        int size = marshaller.serializedSize(message);
        if (size < 0 || size > SlabPool.MAX_BLOCK - PREFIX - LARGE_FRAME_SKEW) {
            throw new IllegalArgumentException("message size " + size + " is not supported");
        }
        SlabBuffer buf = allocate(pool, PREFIX + size);
        try {
            MemorySegment seg = buf.segment();
            // the header is written when the frame is sent; until then its flags say whether the bytes are compressed
            FrameHeader.write(seg, 0, 0, FrameType.MESSAGE, marshaller.isCompressed(message) ? FrameFlags.COMPRESSED : 0, 0, 0);
            seg.set(LENGTH, FrameHeader.SIZE, size);
            marshaller.write(message, seg, PREFIX, size);
            buf.setLength(PREFIX + size);
            return buf;
        } catch (RuntimeException | Error e) {
            buf.release();
            throw e;
        }
    }

    /**
     * The framed message with an attachment of {@code attachmentSize} bytes to follow it:
     * {@code [header 16][message length 4][attachment length 4][message bytes]}, the header's placeholder flags marking
     * {@link FrameFlags#ATTACHMENT}. The attachment's bytes are sent from the caller's memory after these.
     */
    public static <T> SlabBuffer frameWithAttachment(SlabPool pool, Marshaller<T> marshaller, T message, int attachmentSize) {
        int size = marshaller.serializedSize(message);
        if (size < 0 || size > SlabPool.MAX_BLOCK - PREFIX - 4 - LARGE_FRAME_SKEW) {
            throw new IllegalArgumentException("message size " + size + " is not supported");
        }
        SlabBuffer buf = allocate(pool, PREFIX + 4 + size);
        try {
            MemorySegment seg = buf.segment();
            int flags = FrameFlags.ATTACHMENT | (marshaller.isCompressed(message) ? FrameFlags.COMPRESSED : 0);
            FrameHeader.write(seg, 0, 0, FrameType.MESSAGE, flags, 0, 0);
            seg.set(LENGTH, FrameHeader.SIZE, size);
            seg.set(LENGTH, PREFIX, attachmentSize);
            marshaller.write(message, seg, PREFIX + 4, size);
            buf.setLength(PREFIX + 4 + size);
            return buf;
        } catch (RuntimeException | Error e) {
            buf.release();
            throw e;
        }
    }

    /**
     * A buffer of {@code length} bytes for a frame. One larger than a page starts {@link #LARGE_FRAME_SKEW} bytes into
     * its block rather than on the page its block starts on: written to a socket from the start of a page, the kernel's
     * copy of it ran about four times slower (a 64 KiB answer over TCP: 6.8 against 1.8 µs a call; PERFORMANCE.md,
     * "Frames off the page boundary").
     */
    private static SlabBuffer allocate(SlabPool pool, int length) {
        if (length <= SlabPool.PAGE_SIZE) {
            return pool.allocate(length);
        }
        return pool.allocate(length, LARGE_FRAME_SKEW);
    }

    /** Writes the header of a MESSAGE frame. */
    static void writeHeader(MemorySegment seg, long offset, int payloadLength, int flags, int streamId) {
        FrameHeader.write(seg, offset, payloadLength, FrameType.MESSAGE, flags, streamId, 0);
    }

    /**
     * The flags of the BEGIN frame that {@link #frame} or {@link #frameWithAttachment} marked in the placeholder
     * header: COMPRESSED if the message's bytes are compressed, ATTACHMENT if an attachment follows.
     */
    static int compressedFlag(SlabBuffer framed) {
        return FrameHeader.flags(framed.segment(), 0) & (FrameFlags.COMPRESSED | FrameFlags.ATTACHMENT);
    }

    static int flags(boolean begin, boolean end, boolean endStream) {
        return (begin ? FrameFlags.BEGIN : 0) | (end ? FrameFlags.END : 0) | (endStream ? FrameFlags.END_STREAM : 0);
    }
}
