package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The zero-copy ByteBuf over a slab buffer: content, address, bounds and the one release. */
@ExtendWith(LeakCheck.class)
class SlabByteBufTest {

    private static SlabBuffer filled(int length) {
        SlabBuffer b = SlabPool.shared().allocate(length);
        for (int i = 0; i < length; i++) {
            b.segment().set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        return b.setLength(length);
    }

    @Test
    void exposesExactlyTheContentAtTheSlabAddress() {
        SlabBuffer slab = filled(300);
        SlabByteBuf buf = new SlabByteBufPool(1).wrap(slab);
        try {
            assertEquals(300, buf.readableBytes());
            assertEquals(300, buf.capacity());
            assertTrue(buf.isDirect());
            assertTrue(buf.hasMemoryAddress());
            assertEquals(slab.address(), buf.memoryAddress());
            assertEquals(1, buf.nioBufferCount());
            assertEquals((byte) 7, buf.getByte(7));
            assertEquals(0x00010203, buf.getInt(0));
            assertEquals(0x03020100, buf.getIntLE(0));
            assertEquals(0x0001020304050607L, buf.getLong(0));
            assertEquals(0x050403, buf.getUnsignedMediumLE(3));
            assertThrows(IndexOutOfBoundsException.class, () -> buf.getByte(300));
            ByteBuffer nio = buf.nioBuffer(10, 5);
            assertEquals(5, nio.remaining());
            assertEquals((byte) 10, nio.get(0));
            byte[] copy = new byte[20];
            buf.getBytes(100, copy);
            assertEquals((byte) 100, copy[0]);
            ByteBuf heap = Unpooled.buffer(300);
            heap.writeBytes(buf, 0, 300);
            assertEquals((byte) 255, heap.getByte(255));
            heap.release();
            assertThrows(UnsupportedOperationException.class, () -> buf.capacity(600));
            buf.setInt(0, 0x0A0B0C0D);
            assertEquals((byte) 0x0A, slab.segment().get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(1, slab.refCnt());
        } finally {
            assertTrue(buf.release());
        }
        assertEquals(0, slab.refCnt());
        assertFalse(buf.isReadable() && buf.refCnt() > 0);
    }

    @Test
    void aRetainedSliceReleasesOnlyItsOwnReference() {
        SlabBuffer block = filled(1000);
        SlabBuffer slice = block.retainedSlice(200, 100);
        SlabByteBuf buf = new SlabByteBufPool(1).wrap(slice);
        byte[] out = new byte[100];
        buf.getBytes(0, out);
        byte[] expected = new byte[100];
        for (int i = 0; i < 100; i++) {
            expected[i] = (byte) (200 + i);
        }
        assertArrayEquals(expected, out);
        assertEquals(2, block.refCnt());
        buf.release();
        assertEquals(1, block.refCnt());
        block.release();
    }

    @Test
    void aReleasedWrapperIsReusedForTheNextBufferAndShowsOnlyThatOne() {
        SlabByteBufPool pool = new SlabByteBufPool(2);
        SlabBuffer first = filled(300);
        SlabByteBuf a = pool.wrap(first);
        a.readerIndex(100);
        a.markReaderIndex();
        assertEquals(0, pool.spareCount());
        assertTrue(a.release());
        assertEquals(0, first.refCnt());
        assertEquals(1, pool.spareCount(), "Netty's release gave the wrapper back");
        SlabBuffer second = filled(40);
        SlabByteBuf b = pool.wrap(second);
        try {
            assertTrue(a == b, "the spare wrapper is reused");
            assertEquals(1, b.refCnt());
            assertEquals(0, b.readerIndex());
            assertEquals(40, b.readableBytes());
            assertEquals(40, b.capacity());
            assertEquals(40, b.maxCapacity());
            assertEquals(second.address(), b.memoryAddress());
            assertThrows(IndexOutOfBoundsException.class, () -> b.getByte(40));
            b.readerIndex(10).resetReaderIndex();
            assertEquals(0, b.readerIndex(), "no mark left from the previous use");
        } finally {
            b.release();
        }
        assertEquals(0, second.refCnt());
        SlabByteBuf[] many = new SlabByteBuf[4];
        for (int i = 0; i < many.length; i++) {
            many[i] = pool.wrap(filled(8));
        }
        for (SlabByteBuf m : many) {
            m.release();
        }
        assertEquals(2, pool.spareCount(), "the pool keeps at most its capacity");
    }
}
