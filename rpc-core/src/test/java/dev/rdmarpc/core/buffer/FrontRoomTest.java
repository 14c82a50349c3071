package dev.rdmarpc.core.buffer;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A buffer allocated with front room: the bytes before it are its own, {@link SlabBuffer#prepend} fills them without
 * touching its content, the buffer it returns carries the one reference, and views made of it have no room.
 */
class FrontRoomTest {

    @Test
    void prependPutsBytesBeforeTheContentAndKeepsOneReference() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer buf = pool.allocate(8192, 256);
        assertEquals(256, buf.frontRoom());
        assertEquals(0, buf.length());
        fill(buf, new byte[] {5, 6, 7});
        long contentAt = buf.address();

        MemorySegment front = MemorySegment.ofArray(new byte[] {0, 1, 2, 3, 4, 99});
        SlabBuffer joined = buf.prepend(front, 0, 5);

        assertEquals(contentAt - 5, joined.address(), "the content did not move; the front went before it");
        assertArrayEquals(new byte[] {0, 1, 2, 3, 4, 5, 6, 7}, joined.segment().asSlice(0, joined.length())
                .toArray(ValueLayout.JAVA_BYTE));
        assertEquals(251, joined.frontRoom(), "what is left of the room");
        assertEquals(8192 + 5, joined.capacity());
        assertEquals(1, joined.refCnt(), "the reference went over to the joined buffer");
        assertThrows(IllegalStateException.class, buf::release, "the buffer prepended to is no longer owned");
        assertTrue(joined.release());
        assertEquals(0, pool.inUseBuffers());
    }

    @Test
    void moreThanTheRoomIsRefusedAndTheBufferStaysTheCallers() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer buf = pool.allocate(100, 16);
        fill(buf, new byte[] {1});
        MemorySegment front = MemorySegment.ofArray(new byte[17]);
        assertThrows(IllegalArgumentException.class, () -> buf.prepend(front, 0, 17));
        assertSame(buf, buf.prepend(front, 0, 0), "nothing to prepend: the same buffer");
        assertEquals(1, buf.length());
        assertTrue(buf.release());
        assertEquals(0, pool.inUseBuffers());
    }

    @Test
    void otherBuffersAndSlicesHaveNoRoom() {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer plain = pool.allocate(4096);
        assertEquals(0, plain.frontRoom());
        SlabBuffer roomy = pool.allocate(4096, 64);
        roomy.setLength(4096);
        SlabBuffer slice = roomy.retainedSlice(100, 200);
        assertEquals(0, slice.frontRoom(), "a slice's bytes before it may belong to someone else");
        assertThrows(IllegalArgumentException.class, () -> slice.prepend(MemorySegment.ofArray(new byte[1]), 0, 1));
        slice.release();
        roomy.release();
        plain.release();
        assertEquals(0, pool.inUseBuffers());
    }

    private static void fill(SlabBuffer buf, byte[] bytes) {
        MemorySegment.copy(bytes, 0, buf.segment(), ValueLayout.JAVA_BYTE, 0, bytes.length);
        buf.setLength(bytes.length);
    }
}
