package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The decoder on an in-memory channel: every way of cutting the stream gives the same frames. */
@ExtendWith(LeakCheck.class)
class FrameDecoderTest {
    private final RecordingHandler.Factory handlers = new RecordingHandler.Factory(false);
    private EmbeddedChannel channel;

    private RecordingHandler open() throws InterruptedException {
        channel = new EmbeddedChannel(new TcpChannelHandler(handlers, null, new OpenConnections()));
        return handlers.next();
    }

    @AfterEach
    void finish() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void everyTwoWaySplitGivesTheSameFrames() throws Exception {
        List<byte[]> payloads = List.of(new byte[0], TestFrames.pattern(1, 1, 37), new byte[0], TestFrames.pattern(1, 3, 5));
        byte[] all = TestFrames.messageStream(payloads);
        for (int cut = 0; cut <= all.length; cut++) {
            for (boolean direct : new boolean[] {true, false}) {
                RecordingHandler h = open();
                channel.writeInbound(TestFrames.piece(all, 0, cut, direct));
                channel.writeInbound(TestFrames.piece(all, cut, all.length, direct));
                h.assertMessageStream(payloads);
                channel.finishAndReleaseAll();
            }
        }
        channel = null;
    }

    @Test
    void oneByteAtATime() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(2, 0, 3000), TestFrames.pattern(2, 1, 8), new byte[0]);
        byte[] all = TestFrames.messageStream(payloads);
        RecordingHandler h = open();
        for (int i = 0; i < all.length; i++) {
            channel.writeInbound(TestFrames.piece(all, i, i + 1, i % 2 == 0));
        }
        h.assertMessageStream(payloads);
    }

    @Test
    void manyFramesInOneRead() throws Exception {
        List<byte[]> payloads = new java.util.ArrayList<>();
        for (int i = 0; i < 500; i++) {
            payloads.add(TestFrames.pattern(3, i, i % 50));
        }
        byte[] all = TestFrames.messageStream(payloads);
        RecordingHandler h = open();
        channel.writeInbound(TestFrames.piece(all, 0, all.length, true));
        h.assertMessageStream(payloads);
    }

    @Test
    void largeFrameInReadSizedPiecesWithTheNextHeaderAttached() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(4, 0, FrameHeader.DEFAULT_MAX_PAYLOAD), TestFrames.pattern(4, 1, 100),
                TestFrames.pattern(4, 2, 200_000));
        byte[] all = TestFrames.messageStream(payloads);
        RecordingHandler h = open();
        for (int pos = 0; pos < all.length; pos += 65_536) {
            channel.writeInbound(TestFrames.piece(all, pos, Math.min(all.length, pos + 65_536), true));
        }
        h.assertMessageStream(payloads);
    }

    @Test
    void oversizeHeaderIsRefusedAtOnce() throws Exception {
        RecordingHandler h = open();
        ByteArrayOutputStream w = new ByteArrayOutputStream();
        w.write(TestFrames.helloWire());
        w.write(TestFrames.headerWire(FrameType.MESSAGE, 1, FrameHeader.DEFAULT_MAX_PAYLOAD + 1));
        byte[] all = w.toByteArray();
        channel.writeInbound(TestFrames.piece(all, 0, all.length, true));
        channel.runPendingTasks();
        h.awaitClosed();
        assertInstanceOf(ProtocolException.class, h.closedCause);
        assertFalse(channel.isOpen());
    }

    @Test
    void closeWithHalfAFrameNamesTheTruncation() throws Exception {
        RecordingHandler h = open();
        byte[] all = TestFrames.messageStream(List.of(TestFrames.pattern(5, 0, 64)));
        channel.writeInbound(TestFrames.piece(all, 0, all.length - 10, true));
        channel.close();
        h.awaitClosed();
        assertTrue(h.closedReason.contains("truncated frame: the stream ended after 70 of the 80 bytes of a MESSAGE frame"),
                h.closedReason);
        assertInstanceOf(EOFException.class, h.closedCause);
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        assertTrue(h.frames.isEmpty(), Arrays.toString(h.frames.toArray()));
    }

    /** Direct buffers that counts the capacity it hands out, to see how much the decoder allocates and copies. */
    private static final class CountingAllocator extends AbstractByteBufAllocator {
        long directBytes;

        CountingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return Unpooled.buffer(initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            directBytes += initialCapacity;
            return Unpooled.directBuffer(initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }

    private TcpFrameConnection connection(RecordingHandler h) {
        return (TcpFrameConnection) h.connection;
    }

    @Test
    void aHeaderAnnouncingTheMaximumHoldsOnlyWhatArrived() throws Exception {
        RecordingHandler h = open();
        CountingAllocator alloc = new CountingAllocator();
        channel.config().setAllocator(alloc);
        // As the socket hands reads over: in a read buffer with room to spare.
        ByteBuf read = ByteBufAllocator.DEFAULT.directBuffer(2048);
        read.writeBytes(TestFrames.helloWire()).writeBytes(TestFrames.headerWire(FrameType.MESSAGE, 1, FrameHeader.DEFAULT_MAX_PAYLOAD));
        channel.writeInbound(read);
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        int held = connection(h).bufferedInputCapacity();
        assertTrue(held > 0 && held <= FrameDecoder.MIN_CAPACITY, "bytes held for a 16-byte header: " + held);
        assertTrue(alloc.directBytes <= FrameDecoder.MIN_CAPACITY, "allocated " + alloc.directBytes);

        // 1 KiB of the payload: the buffer follows what arrived, not the 1 MiB announced.
        channel.writeInbound(TestFrames.piece(new byte[1024], 0, 1024, true));
        held = connection(h).bufferedInputCapacity();
        assertTrue(held >= FrameHeader.SIZE + 1024 && held <= 4 * (FrameHeader.SIZE + 1024), "held " + held);
        assertTrue(h.frames.isEmpty());
    }

    @Test
    void aLargeFrameArrivingInReadSizedPiecesIsCopiedAFewTimesAtMost() throws Exception {
        byte[] payload = TestFrames.pattern(6, 0, FrameHeader.DEFAULT_MAX_PAYLOAD);
        byte[] all = TestFrames.messageStream(List.of(payload));
        RecordingHandler h = open();
        CountingAllocator alloc = new CountingAllocator();
        channel.config().setAllocator(alloc);
        for (int pos = 0; pos < all.length; pos += 65_536) {
            channel.writeInbound(TestFrames.piece(all, pos, Math.min(all.length, pos + 65_536), true));
        }
        h.assertMessageStream(List.of(payload));
        // Doubling from one read to the frame's size allocates (and copies) less than twice the frame in all;
        // one copy per read into a buffer of the frame's size would be 16 times the frame.
        assertTrue(alloc.directBytes < 2L * all.length, "allocated " + alloc.directBytes + " for a frame of " + all.length);
        assertEquals(0, connection(h).bufferedInputCapacity());
    }

    @Test
    void aFirstFrameOverThePreHelloLimitIsRefusedAtItsHeader() throws Exception {
        RecordingHandler h = open();
        channel.writeInbound(TestFrames.piece(TestFrames.headerWire(FrameType.HELLO, 0, FrameDecoder.PRE_HELLO_MAX_PAYLOAD + 1), 0, 16, true));
        channel.runPendingTasks();
        h.awaitClosed();
        assertInstanceOf(ProtocolException.class, h.closedCause);
        assertTrue(h.closedReason.contains("exceeds the maximum " + FrameDecoder.PRE_HELLO_MAX_PAYLOAD), h.closedReason);
    }

    @Test
    void aFirstFrameAtThePreHelloLimitIsAccepted() throws Exception {
        RecordingHandler h = open();
        byte[] hello = TestFrames.wire(FrameType.HELLO, 0, 0, 0, new byte[FrameDecoder.PRE_HELLO_MAX_PAYLOAD]);
        byte[] big = TestFrames.wire(FrameType.MESSAGE, 0, 1, 0, new byte[FrameHeader.DEFAULT_MAX_PAYLOAD]);
        channel.writeInbound(TestFrames.piece(hello, 0, hello.length, true));
        channel.writeInbound(TestFrames.piece(big, 0, big.length, true));
        assertEquals(FrameDecoder.PRE_HELLO_MAX_PAYLOAD, h.nextFrame().payload().length);
        assertEquals(FrameHeader.DEFAULT_MAX_PAYLOAD, h.nextFrame().payload().length);
        assertNull(h.closedReason);
    }
}
