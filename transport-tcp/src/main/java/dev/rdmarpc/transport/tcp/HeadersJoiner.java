package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;

/**
 * Hands a {@link TcpFrameConnection}'s sends to its Netty channel, copying a small HEADERS frame into the room before
 * the large frame sent after it, so that the two are one buffer and leave in one system call.
 *
 * <p>Why: a unary request is core's HEADERS frame (tens of bytes) and then its MESSAGE frame, two sends. Netty's epoll
 * transport writes what is flushed with one {@code writev} of at most its gathering-write cap (at first twice the
 * socket's send buffer), always taking the first buffer whole but stopping before a later one that would pass the cap;
 * so a request of 64 KiB left as two system calls, and the server woke to read the HEADERS alone. Joining the two
 * buffers as a composite does not help (Netty hands the kernel a composite's parts the same way); one contiguous
 * buffer does. Core places a large frame some bytes into a block of its own and offers them as the buffer's front
 * room ({@link dev.rdmarpc.core.buffer.SlabBuffer#frontRoom()}); the HEADERS are copied there.
 *
 * <p>What is held: a send of exactly one HEADERS frame of at most {@link #HELD_MAX_BYTES}, without a tail, waits
 * until the next send or flush. If that next send's first buffer has room for it, it goes in front of it; otherwise it
 * is written first on its own, as it would have been. A send's own small HEADERS head goes into its tail's room the
 * same way. Nothing is ever written out of order: the held frame is always the last one taken.
 *
 * <p>Not used on connections an HTTP/2 bridge translates ({@link #disable}). Used on the connection's I/O thread only.
 */
final class HeadersJoiner {
    /** HEADERS frames up to this size are held back to be joined (core's front room is 256 bytes). */
    static final int HELD_MAX_BYTES = 256;

    private final Channel channel;
    private final ChannelPromise promise;
    private boolean enabled = true;
    /** A lone HEADERS frame not yet handed to Netty; null when none. */
    private SlabByteBuf held;

    HeadersJoiner(Channel channel, ChannelPromise promise) {
        this.channel = channel;
        this.promise = promise;
    }

    /** Writes every send as it comes from now on. */
    void disable() {
        enabled = false;
    }

    /** Writes {@code head} then {@code tail} (may be null) after any held frame, or holds {@code head}; owns both. */
    void write(SlabByteBuf head, SlabByteBuf tail) {
        if (!enabled) {
            writeApart(head, tail);
            return;
        }
        SlabByteBuf before = held;
        held = null;
        if (before != null) {
            if (head.hasRoomFor(before)) {
                head.putInFront(before);
            } else {
                channel.write(before, promise);
            }
        }
        if (tail == null) {
            if (isSmallHeaders(head)) {
                held = head;
            } else {
                channel.write(head, promise);
            }
        } else if (isSmallHeaders(head) && tail.hasRoomFor(head)) {
            tail.putInFront(head);
            channel.write(tail, promise);
        } else {
            writeApart(head, tail);
        }
    }

    /** Hands Netty the held frame, if any; before every flush. */
    void writeHeld() {
        SlabByteBuf h = held;
        if (h != null) {
            held = null;
            channel.write(h, promise);
        }
    }

    /** Frees the held frame, if any; when the connection closes. */
    void releaseHeld() {
        SlabByteBuf h = held;
        if (h != null) {
            held = null;
            h.release();
        }
    }

    private void writeApart(SlabByteBuf head, SlabByteBuf tail) {
        channel.write(head, promise);
        if (tail != null) {
            channel.write(tail, promise);
        }
    }

    /** Whether {@code b} holds exactly one HEADERS frame of at most {@link #HELD_MAX_BYTES}. */
    private static boolean isSmallHeaders(SlabByteBuf b) {
        int n = b.readableBytes();
        if (n < FrameHeader.SIZE || n > HELD_MAX_BYTES) {
            return false;
        }
        int start = b.readerIndex();
        return (b.getByte(start + FrameHeader.TYPE_OFFSET) & 0xff) == FrameType.HEADERS
                && b.getIntLE(start + FrameHeader.LENGTH_OFFSET) + FrameHeader.SIZE == n;
    }
}
