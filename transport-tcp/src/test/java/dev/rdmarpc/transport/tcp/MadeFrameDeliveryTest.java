package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames an HTTP/2 bridge makes for core ({@link TcpFrameConnection#receiveMade}): handed over at once when nothing
 * received waits, in order behind what does, validated as read frames are, and with no buffer left behind.
 */
@ExtendWith(LeakCheck.class)
class MadeFrameDeliveryTest {
    private final RecordingHandler.Factory handlers = new RecordingHandler.Factory(false);
    private EmbeddedChannel channel;

    @AfterEach
    void finish() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
    }

    private RecordingHandler open() throws InterruptedException {
        channel = new EmbeddedChannel(new TcpChannelHandler(handlers, null, new OpenConnections()));
        return handlers.next();
    }

    private TcpFrameConnection connection(RecordingHandler h) {
        return (TcpFrameConnection) h.connection;
    }

    @Test
    void aMadeFrameReachesTheHandlerAtOnceWithItsBufferAsHolder() throws Exception {
        RecordingHandler h = open();
        channel.writeInbound(Unpooled.wrappedBuffer(TestFrames.helloWire()));
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        byte[] payload = TestFrames.pattern(1, 1, 100);
        int holdersBefore = h.holderFrames.get();
        connection(h).receiveMade(TestFrames.message(3, payload));
        TestFrames.Frame f = h.frames.poll();
        assertEquals(FrameType.MESSAGE, f.type());
        assertEquals(3, f.streamId());
        assertArrayEquals(payload, f.payload());
        assertEquals(holdersBefore + 1, h.holderFrames.get(), "the slab buffer was offered as the payload's holder");
    }

    @Test
    void aKeptPayloadOutlivesTheCallAndIsFreedByItsHolder() throws Exception {
        RecordingHandler h = open();
        channel.writeInbound(Unpooled.wrappedBuffer(TestFrames.helloWire()));
        h.nextFrame();
        h.keepHolders = true;
        byte[] payload = TestFrames.pattern(1, 2, 70_000);
        connection(h).receiveMade(TestFrames.message(5, payload));
        h.nextFrame();
        SlabBuffer kept = h.kept.poll();
        assertArrayEquals(payload, kept.segment().asSlice(0, kept.length()).toArray(ValueLayout.JAVA_BYTE));
        kept.release();
    }

    @Test
    void aFrameMadeWhileReadFramesAreHandedOutComesAfterThem() throws Exception {
        List<Integer> streams = new ArrayList<>();
        FrameHandlerFactory factory = connection -> new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
                streams.add(streamId);
                if (streamId == 1) { // as a bridge whose frame for core results from one core is handling
                    ((TcpFrameConnection) connection).receiveMade(TestFrames.message(99, new byte[] {9}));
                }
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        };
        channel = new EmbeddedChannel(new TcpChannelHandler(factory, null, new OpenConnections()));
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        read.write(TestFrames.helloWire());
        read.write(TestFrames.wire(FrameType.MESSAGE, 0, 1, 0, new byte[] {1}));
        read.write(TestFrames.wire(FrameType.MESSAGE, 0, 3, 0, new byte[] {3}));
        channel.writeInbound(Unpooled.wrappedBuffer(read.toByteArray()));
        channel.runPendingTasks();
        assertEquals(List.of(0, 1, 3, 99), streams);
    }

    @Test
    void beforeTheFirstFrameAMadeFrameIsCheckedAsAFirstFrame() throws Exception {
        RecordingHandler h = open();
        connection(h).receiveMade(TestFrames.message(1, new byte[] {1}));
        h.awaitClosed();
        assertTrue(h.closedReason.contains("HELLO"), h.closedReason);
    }

    @Test
    void aMadeFrameInANettyBufferIsHandedOverToo() throws Exception {
        RecordingHandler h = open();
        ByteBuf hello = channel.alloc().directBuffer().writeBytes(TestFrames.helloWire());
        connection(h).receiveMade(hello);
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        byte[] payload = TestFrames.pattern(2, 1, 33);
        ByteBuf frame = channel.alloc().directBuffer().writeBytes(TestFrames.wire(FrameType.MESSAGE, 0, 7, 0, payload));
        connection(h).receiveMade(frame);
        TestFrames.Frame f = h.frames.poll();
        assertEquals(7, f.streamId());
        assertArrayEquals(payload, f.payload());
        assertEquals(0, frame.refCnt());
    }

    @Test
    void aMadeFrameOverTheLimitClosesTheConnection() throws Exception {
        RecordingHandler h = open();
        channel.writeInbound(Unpooled.wrappedBuffer(TestFrames.helloWire()));
        h.nextFrame();
        connection(h).setMaxInboundPayload(64);
        connection(h).receiveMade(TestFrames.message(3, new byte[65]));
        h.awaitClosed();
        assertTrue(h.closedReason.contains("65"), h.closedReason);
        assertTrue(h.frames.isEmpty(), "the frame over the limit must not reach the handler");
    }
}
