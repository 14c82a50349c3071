package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * gRPC's length-prefixed messages (a compressed flag byte, a 4-byte big-endian length) on HTTP/2 DATA, both ways: an
 * instance reads one stream's DATA into rdmarpc MESSAGE frames for core; {@link #data} puts the prefix before the
 * bytes of a MESSAGE frame core sent. Used on the connection's I/O thread only.
 */
final class GrpcFraming {
    /** gRPC's message prefix: a compressed flag byte and a 4-byte big-endian length. */
    static final int PREFIX = 5;
    /** The largest MESSAGE payload {@link #data} copies rather than wraps. */
    static final int COPY_LIMIT = 16 * 1024;
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Bytes of the current message's prefix read so far (0..5); 5 while its body is being read. */
    private int prefixRead;
    private final byte[] prefix = new byte[PREFIX];
    /** Body bytes of the current message still to come (valid while {@link #prefixRead} is 5). */
    private long bodyLeft;
    /** Whether the current message's first MESSAGE frame (BEGIN) has gone to core. */
    private boolean begun;

    /** Whether a message is being read (its prefix has begun or its body has bytes to come). */
    boolean insideMessage() {
        return prefixRead > 0;
    }

    /**
     * Hands the messages in {@code in} to {@code core} as MESSAGE frames of stream {@code coreId}, none with more than
     * {@code maxPayload} bytes of payload, until {@code in} is read or {@code stop} says the call ended; returns how
     * many of the bytes read core never counts, and so never credits back: the flag byte of each message prefix begun
     * here. Core counts the other four prefix bytes (the length its BEGIN frame starts with) and every body byte, in
     * the MESSAGE frame that carries them, even when a prefix is split over two DATA frames.
     *
     * @throws IllegalArgumentException when a message's compressed flag is neither 0 nor 1
     */
    int read(ByteBuf in, int coreId, int maxPayload, CoreFrames frames, Consumer<SlabBuffer> core, BooleanSupplier stop) {
        int uncounted = 0;
        int maxChunk = Math.max(1, maxPayload - 4);
        while (in.isReadable() && !stop.getAsBoolean()) {
            if (prefixRead < PREFIX) {
                if (prefixRead == 0) {
                    uncounted++;
                }
                int n = Math.min(PREFIX - prefixRead, in.readableBytes());
                in.readBytes(prefix, prefixRead, n);
                prefixRead += n;
                if (prefixRead < PREFIX) {
                    break;
                }
                if ((prefix[0] & ~1) != 0) {
                    throw new IllegalArgumentException("a message's compressed flag is " + prefix[0] + ", not 0 or 1");
                }
                bodyLeft = length();
                begun = false;
                if (bodyLeft > 0) {
                    continue;
                }
            }
            int n = (int) Math.min(bodyLeft, Math.min(in.readableBytes(), begun ? maxChunk + 4 : maxChunk));
            int flags = begun ? 0 : FrameFlags.BEGIN | (prefix[0] == 1 ? FrameFlags.COMPRESSED : 0);
            if (n == bodyLeft) {
                flags |= FrameFlags.END;
            }
            core.accept(frames.message(coreId, flags, length(), in, n));
            begun = true;
            bodyLeft -= n;
            if (bodyLeft == 0) {
                prefixRead = 0;
            }
        }
        return uncounted;
    }

    private long length() {
        return ((prefix[1] & 0xffL) << 24) | ((prefix[2] & 0xff) << 16) | ((prefix[3] & 0xff) << 8) | (prefix[4] & 0xff);
    }

    /**
     * The DATA content of a MESSAGE frame's payload: on a BEGIN frame, gRPC's prefix in place of core's length. Up to
     * {@link #COPY_LIMIT} bytes are copied with the prefix into one slab buffer of {@code pool}'s (wrapped by one of
     * {@code wrappers}), which costs less than a composite's parts and its gathering write, and gives core's buffer
     * back at once; larger payloads are not copied (the prefix and the composite come from {@code alloc}).
     */
    static ByteBuf data(ByteBufAllocator alloc, SlabPool pool, SlabByteBufPool wrappers, int flags, ByteBuf payload) {
        if ((flags & FrameFlags.BEGIN) == 0) {
            return payload.retainedSlice();
        }
        long length = payload.readUnsignedIntLE();
        int compressed = (flags & FrameFlags.COMPRESSED) != 0 ? 1 : 0;
        int n = payload.readableBytes();
        if (n <= COPY_LIMIT) {
            SlabBuffer b = pool.allocate(PREFIX + n);
            try {
                MemorySegment seg = b.segment();
                seg.set(ValueLayout.JAVA_BYTE, 0, (byte) compressed);
                seg.set(INT_BE, 1, (int) length);
                CoreFrames.copy(payload, payload.readerIndex(), seg, PREFIX, n);
                b.setLength(PREFIX + n);
            } catch (RuntimeException | Error e) {
                b.release();
                throw e;
            }
            return wrappers.wrap(b);
        }
        ByteBuf prefix = alloc.buffer(PREFIX);
        prefix.writeByte(compressed).writeInt((int) length);
        CompositeByteBuf c = alloc.compositeBuffer(2);
        c.addComponent(true, prefix);
        c.addComponent(true, payload.retainedSlice());
        return c;
    }
}
