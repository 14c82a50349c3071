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
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.Http2Headers;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * rdmarpc frames in slab buffers, made for core on behalf of an HTTP/2 peer: what an {@link H2Bridge} (or on a client
 * an {@link H2ClientBridge}) hands to core in place of the peer's HTTP/2 frames (see
 * {@link TcpFrameConnection#receiveMade(SlabBuffer)}). Control frames come from core's own encoders.
 */
final class CoreFrames {
    /** Past this capacity the scratch buffer is not kept once a frame has been made in it. */
    private static final int SCRATCH_KEPT = 16 * 1024;
    private final SlabPool pool;
    /** Where a request's HEADERS frame is written before it is copied, at its size, into a slab buffer. */
    private ByteBuf scratch = Unpooled.buffer(256);

    CoreFrames(SlabPool pool) {
        this.pool = pool;
    }

    SlabBuffer hello(Hello hello) {
        return Frames.hello(pool, hello);
    }

    SlabBuffer cancel(int streamId, Status status) {
        return Frames.cancel(pool, streamId, status);
    }

    SlabBuffer endStream(int streamId) {
        return Frames.endStream(pool, streamId);
    }

    SlabBuffer window(int streamId, int increment) {
        return Frames.window(pool, streamId, increment);
    }

    /**
     * The HEADERS frame of core stream {@code streamId} for an HTTP/2 request's headers {@code h} (see
     * {@link H2RequestHeaders#write}).
     *
     * @throws IllegalArgumentException when a header is not valid metadata (nothing is left allocated)
     */
    SlabBuffer requestHeaders(int streamId, boolean endStream, Http2Headers h, long timeoutNanos) {
        ByteBuf b = scratch.clear();
        try {
            H2RequestHeaders.write(b, streamId, endStream, h, timeoutNanos);
            int n = b.readableBytes();
            SlabBuffer frame = pool.allocate(n);
            copy(b, 0, frame.segment(), 0, n);
            frame.setLength(n);
            return frame;
        } finally {
            if (b.capacity() > SCRATCH_KEPT) {
                scratch = Unpooled.buffer(256);
            }
        }
    }

    SlabBuffer responseHeaders(int streamId, Metadata md) {
        return Frames.responseHeaders(pool, streamId, md);
    }

    SlabBuffer trailers(int streamId, Status status, Metadata md) {
        return Frames.trailers(pool, streamId, status, md);
    }

    SlabBuffer goAway(int lastStreamId, Status status) {
        return Frames.goAway(pool, lastStreamId, status);
    }

    SlabBuffer connectionWindow(int increment) {
        return Frames.connectionWindow(pool, increment);
    }

    /** A BLOCKED: the bridge's waiting message needs more of core's connection window than is left. */
    SlabBuffer connectionBlocked() {
        return Frames.connectionBlocked(pool);
    }

    SlabBuffer pingAck(long data) {
        return Frames.ping(pool, data, true);
    }

    /**
     * A MESSAGE frame with {@code length} bytes read from {@code body}, in a slab buffer core may keep the payload of;
     * a BEGIN frame starts with the message's total length {@code messageLength}.
     */
    SlabBuffer message(int streamId, int flags, long messageLength, ByteBuf body, int length) {
        boolean begin = (flags & FrameFlags.BEGIN) != 0;
        int payload = length + (begin ? 4 : 0);
        SlabBuffer b = pool.allocate(FrameHeader.SIZE + payload);
        try {
            MemorySegment seg = b.segment();
            FrameHeader.write(seg, 0, payload, FrameType.MESSAGE, flags, streamId, 0);
            int at = FrameHeader.SIZE;
            if (begin) {
                seg.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), at, (int) messageLength);
                at += 4;
            }
            copy(body, body.readerIndex(), seg, at, length);
            body.skipBytes(length);
            b.setLength(FrameHeader.SIZE + payload);
        } catch (RuntimeException | Error e) {
            b.release();
            throw e;
        }
        return b;
    }

    /** Copies {@code length} bytes of {@code src} from index {@code from} into {@code dst} at {@code at}. */
    static void copy(ByteBuf src, int from, MemorySegment dst, long at, int length) {
        if (src.hasMemoryAddress()) {
            MemorySegment.copy(FrameDecoder.ALL_MEMORY, src.memoryAddress() + from, dst, at, length);
        } else {
            src.getBytes(from, dst.asSlice(at, length).asByteBuffer());
        }
    }

    /** A small control frame's payload for core's decoders: in place when it has an address, else a heap copy. */
    static MemorySegment decodable(ByteBuf payload) {
        int n = payload.readableBytes();
        if (payload.hasMemoryAddress()) {
            return FrameDecoder.ALL_MEMORY.asSlice(payload.memoryAddress() + payload.readerIndex(), n);
        }
        return MemorySegment.ofArray(ByteBufUtil.getBytes(payload));
    }

}
