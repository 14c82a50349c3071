package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Where a framed message lies in its slab block: a frame larger than a page starts off the page boundary its block
 * starts on (what the kernel copies from when the frame is written to a socket), with the bytes before it as its front
 * room, holds exactly the frame, and gives its whole block back when released; a smaller frame is its block as before.
 */
class MessageFramerPlacementTest {
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    @Test
    void aFrameLargerThanAPageStartsOffThePageBoundary() {
        for (int size : new int[] {SlabPool.PAGE_SIZE, 64 << 10, (64 << 10) - MessageFramer.PREFIX, 1 << 20}) {
            byte[] message = FlowControlTest.pattern(size);
            SlabBuffer frame = MessageFramer.frame(pool, FlowControlTest.BYTES, message);
            assertNotEquals(0, frame.address() % SlabPool.PAGE_SIZE, "a frame of " + frame.length() + " bytes");
            assertEquals(MessageFramer.PREFIX + size, frame.length());
            assertEquals(MessageFramer.PREFIX + size, frame.capacity(), "the frame and nothing after it");
            assertEquals(MessageFramer.LARGE_FRAME_SKEW, frame.frontRoom(), "the bytes before it are its front room");
            byte[] written = frame.segment().asSlice(MessageFramer.PREFIX, size).toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(message, written, "message of " + size);
            assertEquals(1, pool.inUseBuffers(), "one block held");
            frame.release();
            assertEquals(0, pool.inUseBuffers(), "the block given back with the frame");
        }
    }

    @Test
    void aFrameOfAPageOrLessIsItsBlock() {
        SlabBuffer frame = MessageFramer.frame(pool, FlowControlTest.BYTES, FlowControlTest.pattern(SlabPool.PAGE_SIZE - MessageFramer.PREFIX));
        assertEquals(SlabPool.PAGE_SIZE, frame.capacity());
        assertEquals(0, frame.address() % SlabPool.PAGE_SIZE, "a page-sized block starts on a page");
        assertEquals(0, frame.frontRoom());
        frame.release();
    }
}
