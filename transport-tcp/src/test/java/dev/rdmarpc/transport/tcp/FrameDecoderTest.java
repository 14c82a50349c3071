package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    private static byte[] stream(List<byte[]> payloads) throws Exception {
        ByteArrayOutputStream w = new ByteArrayOutputStream();
        w.write(TestFrames.helloWire());
        for (int i = 0; i < payloads.size(); i++) {
            w.write(TestFrames.wire(FrameType.MESSAGE, 0, 1, i, payloads.get(i)));
        }
        return w.toByteArray();
    }

    private static ByteBuf piece(byte[] all, int from, int to, boolean direct) {
        if (!direct) {
            return Unpooled.copiedBuffer(all, from, to - from);
        }
        ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(to - from);
        return b.writeBytes(all, from, to - from);
    }

    private static void assertFrames(RecordingHandler h, List<byte[]> payloads) throws InterruptedException {
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        for (int i = 0; i < payloads.size(); i++) {
            TestFrames.Frame f = h.nextFrame();
            assertEquals(i, f.credit());
            assertArrayEquals(payloads.get(i), f.payload(), "frame " + i);
        }
        assertTrue(h.frames.isEmpty());
    }

    @Test
    void everyTwoWaySplitGivesTheSameFrames() throws Exception {
        List<byte[]> payloads = List.of(new byte[0], TestFrames.pattern(1, 1, 37), new byte[0], TestFrames.pattern(1, 3, 5));
        byte[] all = stream(payloads);
        for (int cut = 0; cut <= all.length; cut++) {
            for (boolean direct : new boolean[] {true, false}) {
                RecordingHandler h = open();
                channel.writeInbound(piece(all, 0, cut, direct));
                channel.writeInbound(piece(all, cut, all.length, direct));
                assertFrames(h, payloads);
                channel.finishAndReleaseAll();
            }
        }
        channel = null;
    }

    @Test
    void oneByteAtATime() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(2, 0, 3000), TestFrames.pattern(2, 1, 8), new byte[0]);
        byte[] all = stream(payloads);
        RecordingHandler h = open();
        for (int i = 0; i < all.length; i++) {
            channel.writeInbound(piece(all, i, i + 1, i % 2 == 0));
        }
        assertFrames(h, payloads);
    }

    @Test
    void manyFramesInOneRead() throws Exception {
        List<byte[]> payloads = new java.util.ArrayList<>();
        for (int i = 0; i < 500; i++) {
            payloads.add(TestFrames.pattern(3, i, i % 50));
        }
        byte[] all = stream(payloads);
        RecordingHandler h = open();
        channel.writeInbound(piece(all, 0, all.length, true));
        assertFrames(h, payloads);
    }

    @Test
    void largeFrameInReadSizedPiecesWithTheNextHeaderAttached() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(4, 0, FrameHeader.DEFAULT_MAX_PAYLOAD), TestFrames.pattern(4, 1, 100),
                TestFrames.pattern(4, 2, 200_000));
        byte[] all = stream(payloads);
        RecordingHandler h = open();
        for (int pos = 0; pos < all.length; pos += 65_536) {
            channel.writeInbound(piece(all, pos, Math.min(all.length, pos + 65_536), true));
        }
        assertFrames(h, payloads);
    }

    @Test
    void oversizeHeaderIsRefusedAtOnce() throws Exception {
        RecordingHandler h = open();
        ByteArrayOutputStream w = new ByteArrayOutputStream();
        w.write(TestFrames.helloWire());
        w.write(TestFrames.headerWire(FrameType.MESSAGE, 1, FrameHeader.DEFAULT_MAX_PAYLOAD + 1));
        byte[] all = w.toByteArray();
        channel.writeInbound(piece(all, 0, all.length, true));
        channel.runPendingTasks();
        h.awaitClosed();
        assertInstanceOf(ProtocolException.class, h.closedCause);
        assertFalse(channel.isOpen());
    }

    @Test
    void closeWithHalfAFrameNamesTheTruncation() throws Exception {
        RecordingHandler h = open();
        byte[] all = stream(List.of(TestFrames.pattern(5, 0, 64)));
        channel.writeInbound(piece(all, 0, all.length - 10, true));
        channel.close();
        h.awaitClosed();
        assertTrue(h.closedReason.contains("truncated frame: the stream ended after 70 of the 80 bytes of a MESSAGE frame"),
                h.closedReason);
        assertInstanceOf(EOFException.class, h.closedCause);
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        assertTrue(h.frames.isEmpty(), Arrays.toString(h.frames.toArray()));
    }
}
