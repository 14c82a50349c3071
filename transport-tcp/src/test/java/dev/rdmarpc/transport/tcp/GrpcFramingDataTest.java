package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** A MESSAGE frame's payload as gRPC DATA: small ones copied behind the prefix, large ones wrapped, both exact. */
class GrpcFramingDataTest {
    private final SlabPool pool = new SlabPool(1 << 20, true);
    private final SlabByteBufPool wrappers = new SlabByteBufPool(4);

    @Test
    void aSmallBeginFrameIsCopiedBehindThePrefixAndCoresBufferIsNotKept() {
        ByteBuf payload = beginPayload(4096);
        ByteBuf data = GrpcFraming.data(ByteBufAllocator.DEFAULT, pool, wrappers, FrameFlags.BEGIN | FrameFlags.COMPRESSED,
                payload);
        try {
            assertInstanceOf(SlabByteBuf.class, data, "copied into a slab buffer");
            assertEquals(1, payload.refCnt(), "not retained: the caller's release frees it");
            assertData(data, 1, 4096);
        } finally {
            data.release();
            payload.release();
        }
        assertEquals(0, pool.inUseBuffers(), "the slab buffer is freed with the DATA");
    }

    @Test
    void aLargeBeginFrameIsWrappedNotCopied() {
        int n = GrpcFraming.COPY_LIMIT + 1;
        ByteBuf payload = beginPayload(n);
        ByteBuf data = GrpcFraming.data(ByteBufAllocator.DEFAULT, pool, wrappers, FrameFlags.BEGIN, payload);
        try {
            assertInstanceOf(CompositeByteBuf.class, data);
            assertEquals(2, payload.refCnt(), "retained by the DATA that wraps it");
            assertData(data, 0, n);
        } finally {
            data.release();
            payload.release();
        }
        assertEquals(0, payload.refCnt());
    }

    /** Core's BEGIN payload: its 4-byte little-endian length, then {@code n} bytes 0, 1, 2, ... */
    private static ByteBuf beginPayload(int n) {
        ByteBuf b = Unpooled.directBuffer(4 + n);
        b.writeIntLE(n);
        for (int i = 0; i < n; i++) {
            b.writeByte(i);
        }
        return b;
    }

    private static void assertData(ByteBuf data, int compressed, int n) {
        assertEquals(GrpcFraming.PREFIX + n, data.readableBytes());
        assertEquals(compressed, data.readByte());
        assertEquals(n, data.readInt());
        for (int i = 0; i < n; i++) {
            assertEquals((byte) i, data.readByte(), "byte " + i);
        }
    }
}
