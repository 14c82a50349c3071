package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.EOFException;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Large frames received into slab buffers of their own: the same frames as through the cumulation however the stream
 * is cut, the buffer offered to the handler (which may keep it), only what arrived held, nothing left behind.
 */
@ExtendWith(LeakCheck.class)
class LargeFrameLandingTest {
    private final RecordingHandler.Factory handlers = new RecordingHandler.Factory(false);
    private final SlabPool pool = new SlabPool(64L << 20, true);
    private EmbeddedChannel channel;

    private RecordingHandler open() throws InterruptedException {
        channel = new EmbeddedChannel(new TcpChannelHandler(handlers, null, new OpenConnections(), null, pool, false));
        return handlers.next();
    }

    @AfterEach
    void finish() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        assertEquals(0, pool.inUseBuffers(), pool.describeLiveBuffers());
    }

    private void writeInPieces(byte[] all, int size, boolean direct) {
        for (int pos = 0; pos < all.length; pos += size) {
            channel.writeInbound(TestFrames.piece(all, pos, Math.min(all.length, pos + size), direct));
        }
    }

    private static TcpFrameConnection connection(RecordingHandler h) {
        return (TcpFrameConnection) h.connection;
    }

    private static final List<byte[]> MIXED = List.of(TestFrames.pattern(7, 0, FrameHeader.DEFAULT_MAX_PAYLOAD),
            TestFrames.pattern(7, 1, 100), TestFrames.pattern(7, 2, FrameDecoder.LAND_AT_LEAST),
            TestFrames.pattern(7, 3, FrameDecoder.LAND_AT_LEAST - 1), TestFrames.pattern(7, 4, 200_000), new byte[0]);

    @Test
    void largeFramesArriveWholeHoweverTheStreamIsCut() throws Exception {
        byte[] all = TestFrames.messageStream(MIXED);
        for (int size : new int[] {65_536, 1_000, 16_383, 300_000, all.length}) {
            for (boolean direct : new boolean[] {true, false}) {
                RecordingHandler h = open();
                writeInPieces(all, size, direct);
                h.assertMessageStream(MIXED);
                if (size <= 65_536) {
                    // the 1 MiB, 64 KiB and 200,000-byte frames, each whole in a buffer of its own; a frame that
                    // arrives whole in one read is handed over from where it arrived instead
                    assertEquals(3, h.holderFrames.get(), "pieces of " + size);
                }
                assertEquals(0, connection(h).bufferedInputCapacity());
                channel.finishAndReleaseAll();
                channel = null;
                assertEquals(0, pool.inUseBuffers(), pool.describeLiveBuffers());
            }
        }
    }

    @Test
    void aHandlerMayKeepTheBufferPastTheCall() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(8, 0, 300_000), TestFrames.pattern(8, 1, 300_000));
        RecordingHandler h = open();
        h.keepHolders = true;
        writeInPieces(TestFrames.messageStream(payloads), 65_536, true);
        h.assertMessageStream(payloads);
        assertEquals(2, h.kept.size());
        for (byte[] p : payloads) {
            SlabBuffer b = h.kept.poll();
            assertArrayEquals(p, b.segment().toArray(ValueLayout.JAVA_BYTE), "kept bytes changed after the call");
            b.release();
        }
    }

    @Test
    void aLargeHeaderHoldsOnlyWhatArrivedUntilAQuarterOfItIsThere() throws Exception {
        RecordingHandler h = open();
        channel.writeInbound(TestFrames.piece(TestFrames.helloWire(), 0, TestFrames.helloWire().length, true));
        channel.writeInbound(TestFrames.piece(TestFrames.headerWire(FrameType.MESSAGE, 1, FrameHeader.DEFAULT_MAX_PAYLOAD), 0,
                FrameHeader.SIZE, true));
        channel.writeInbound(TestFrames.piece(new byte[1024], 0, 1024, true));
        int held = connection(h).bufferedInputCapacity();
        assertTrue(held <= 4 * (FrameHeader.SIZE + 1024), "held " + held);
        assertEquals(0, pool.inUseBuffers(), "a slab buffer taken for a frame a peer only announced");
        channel.writeInbound(TestFrames.piece(new byte[FrameHeader.DEFAULT_MAX_PAYLOAD / 4], 0, FrameHeader.DEFAULT_MAX_PAYLOAD / 4, true));
        assertEquals(1, pool.inUseBuffers());
        assertEquals(FrameType.HELLO, h.nextFrame().type());
        assertTrue(h.frames.isEmpty());
    }

    @Test
    void closeInsideALargeFrameNamesTheTruncationAndFreesItsBuffer() throws Exception {
        RecordingHandler h = open();
        byte[] all = TestFrames.messageStream(List.of(TestFrames.pattern(9, 0, 400_000)));
        int cut = all.length - 100_000;
        writeInPieces(java.util.Arrays.copyOf(all, cut), 65_536, true);
        assertEquals(1, pool.inUseBuffers());
        channel.close();
        h.awaitClosed();
        int frame = FrameHeader.SIZE + 400_000;
        assertTrue(h.closedReason.contains("truncated frame: the stream ended after " + (cut - TestFrames.helloWire().length)
                + " of the " + frame + " bytes of a MESSAGE frame"), h.closedReason);
        assertInstanceOf(EOFException.class, h.closedCause);
        assertEquals(0, pool.inUseBuffers(), pool.describeLiveBuffers());
    }
}
