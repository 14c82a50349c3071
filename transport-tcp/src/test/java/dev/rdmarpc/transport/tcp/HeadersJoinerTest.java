package dev.rdmarpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A lone small HEADERS frame waits for the next send and goes into the front room of its first buffer, so the two
 * reach Netty as one buffer; without room, or at a flush, it goes alone and first. The bytes on the wire are the same
 * either way, and nothing is left unreleased (the embedded channel hands over what was flushed, as buffers).
 */
@ExtendWith(LeakCheck.class)
class HeadersJoinerTest {
    private static final byte[] HEADERS_PAYLOAD = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    private static final byte[] BODY = TestFrames.pattern(1, 1, 20_000);

    @Test
    void aLoneHeadersFrameGoesInFrontOfTheLargeFrameAfterIt() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = connection(ch);
        try {
            c.send(headers(), null, false);
            c.send(TestFrames.messageWithRoom(1, BODY, 256), null, true);
            List<byte[]> out = flushed(ch);
            assertEquals(1, out.size(), "one buffer for the two frames");
            assertArrayEquals(wire(true), out.get(0));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aSendOfHeadersAndALargeTailIsOneBuffer() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = connection(ch);
        try {
            c.send(headers(), TestFrames.messageWithRoom(1, BODY, 256), true);
            List<byte[]> out = flushed(ch);
            assertEquals(1, out.size());
            assertArrayEquals(wire(true), out.get(0));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void withoutRoomTheHeadersGoFirstOnTheirOwn() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = connection(ch);
        try {
            c.send(headers(), null, false);
            c.send(TestFrames.messageWithRoom(1, BODY, 8), null, true); // less room than the HEADERS take
            c.send(headers(), null, false);
            c.send(TestFrames.message(1, BODY), null, true); // no room at all
            List<byte[]> out = flushed(ch);
            assertEquals(4, out.size());
            assertArrayEquals(wire(true), concat(out.subList(0, 2)));
            assertArrayEquals(wire(true), concat(out.subList(2, 4)));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aHeldFrameIsWrittenAtTheNextFlush() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = connection(ch);
        try {
            c.send(headers(), null, false);
            assertEquals(0, flushed(ch).size(), "a send without flush waits");
            c.flush();
            List<byte[]> out = flushed(ch);
            assertEquals(1, out.size());
            assertArrayEquals(wire(false), out.get(0));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aHeldFrameIsFreedWhenTheConnectionCloses() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = connection(ch);
        try {
            c.send(headers(), null, false);
            c.channelClosed(null); // what the channel handler calls once the channel is gone
            assertNull(ch.readOutbound(), "nothing was written");
        } finally {
            ch.finishAndReleaseAll();
        } // LeakCheck: the held frame's slab buffer was released
    }

    @Test
    void aConnectionAnHttp2BridgeTranslatesGetsTheFramesAsSent() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = new TcpFrameConnection(ch, true);
        c.servesHttp2();
        bind(c);
        try {
            c.send(headers(), null, false);
            c.send(TestFrames.messageWithRoom(1, BODY, 256), null, true);
            List<byte[]> out = flushed(ch);
            assertEquals(2, out.size(), "the bridge is handed each frame as its own buffer");
            assertArrayEquals(wire(true), concat(out));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    private static TcpFrameConnection connection(EmbeddedChannel ch) {
        TcpFrameConnection c = new TcpFrameConnection(ch, false);
        bind(c);
        return c;
    }

    private static void bind(TcpFrameConnection c) {
        c.bind(new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        });
    }

    private static dev.rdmarpc.core.buffer.SlabBuffer headers() {
        return TestFrames.frame(FrameType.HEADERS, 0, 1, 0, HEADERS_PAYLOAD);
    }

    /** The HEADERS frame's bytes, then (if {@code withBody}) the MESSAGE frame's. */
    private static byte[] wire(boolean withBody) {
        byte[] h = TestFrames.wire(FrameType.HEADERS, 0, 1, 0, HEADERS_PAYLOAD);
        return withBody ? concat(List.of(h, TestFrames.wire(FrameType.MESSAGE, 0, 1, 0, BODY))) : h;
    }

    private static List<byte[]> flushed(EmbeddedChannel ch) {
        List<byte[]> out = new ArrayList<>();
        for (Object m; (m = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) m;
            out.add(ByteBufUtil.getBytes(b));
            b.release();
        }
        return out;
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        parts.forEach(all::writeBytes);
        return all.toByteArray();
    }
}
