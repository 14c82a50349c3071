package dev.rdmarpc.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameHandler;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flushes asked for while frames are being read wait for the end of the read burst, but only
 * {@link BurstFlushRule#EVERY} of them at a time, so a peer with many calls in flight gets the first
 * replies while the rest are being made (for an HTTP/2 client: once enough bytes of them wait); and the handler hears
 * where each burst starts and ends. An embedded channel hands over exactly what was flushed.
 */
@ExtendWith(LeakCheck.class)
class ReadBurstFlushTest {

    @Test
    void aReadBurstFlushesEveryFewRepliesAndTheRestAtItsEnd() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = boundServerConnection(ch);
        int every = BurstFlushRule.EVERY;
        try {
            c.beginReadBurst();
            for (int i = 1; i < every; i++) {
                c.send(TestFrames.message(1, new byte[8]), null, true);
            }
            assertEquals(0, flushedMessages(ch), "replies before the " + every + "th wait for the burst");
            c.send(TestFrames.message(1, new byte[8]), null, true);
            assertEquals(every, flushedMessages(ch), "the " + every + "th reply flushes every one so far");
            c.send(TestFrames.message(1, new byte[8]), null, true);
            c.send(TestFrames.message(1, new byte[8]), null, false);
            assertEquals(0, flushedMessages(ch));
            c.endReadBurst();
            assertEquals(2, flushedMessages(ch), "the burst's end flushes the rest");

            // outside a read burst every flush asked for is done at once
            c.send(TestFrames.message(1, new byte[8]), null, true);
            assertEquals(1, flushedMessages(ch));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** Large replies in a read burst are flushed once {@link BurstFlushRule#LARGE_BYTES} of them wait, however few. */
    @Test
    void largeRepliesInAReadBurstAreFlushedByTheirBytes() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = boundServerConnection(ch);
        int half = BurstFlushRule.LARGE_BYTES / 2; // two replies, headers included, pass the bound
        try {
            c.beginReadBurst();
            c.send(TestFrames.message(1, new byte[half]), null, true);
            assertEquals(0, flushedMessages(ch), "half the bound waits");
            c.send(TestFrames.message(1, new byte[half]), null, true);
            assertEquals(2, flushedMessages(ch), "the reply that passes the bound flushes every one so far");
            c.send(TestFrames.message(1, new byte[8]), null, true);
            assertEquals(0, flushedMessages(ch), "the bytes count again from the flush");
            c.endReadBurst();
            assertEquals(1, flushedMessages(ch));
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /**
     * On a server connection with an HTTP/2 client, replies within a read burst wait by their bytes, not their count:
     * small ones for the burst's end however many there are, larger ones once
     * {@link BurstFlushRule#HTTP2_BYTES} of them wait.
     */
    @Test
    void forAnHttp2ClientRepliesWaitByTheirBytes() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = boundServerConnection(ch);
        c.servesHttp2();
        c.flushBurstsByBytes(); // as the server's handler does when an HTTP/2 client connects
        int many = 4 * BurstFlushRule.EVERY;
        int quarter = BurstFlushRule.HTTP2_BYTES / 4; // four replies, headers included, pass the bound
        try {
            c.beginReadBurst();
            for (int i = 0; i < many; i++) {
                c.send(TestFrames.message(1, new byte[8]), null, true);
            }
            assertEquals(0, flushedMessages(ch), "small replies wait for the burst's end, however many");
            c.endReadBurst();
            assertEquals(many, flushedMessages(ch), "the burst's end flushes them all");

            c.beginReadBurst();
            for (int i = 0; i < 3; i++) {
                c.send(TestFrames.message(1, new byte[quarter]), null, true);
            }
            assertEquals(0, flushedMessages(ch), "three quarters of the bound wait");
            c.send(TestFrames.message(1, new byte[quarter]), null, true);
            assertEquals(4, flushedMessages(ch), "the reply that passes the bound flushes every one so far");
            c.send(TestFrames.message(1, new byte[8]), null, true);
            assertEquals(0, flushedMessages(ch), "the count starts again after a flush");
            c.endReadBurst();
            assertEquals(1, flushedMessages(ch));
        } finally {
            ch.flush();
            ch.finishAndReleaseAll();
        }
    }

    /**
     * Frames an HTTP/2 bridge makes for core each open a read burst if none is open, but do not restart the count of
     * replies waiting for its end: a client's call arrives as several made frames (HEADERS, then MESSAGE), and a count
     * restarted at each would put every reply of a burst off to its end.
     */
    @Test
    void madeFramesAnsweredOneByOneFlushEveryFewReplies() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = new TcpFrameConnection(ch, true);
        c.attachDecoder(new FrameDecoder(c, TestFrames.POOL));
        c.setMaxInboundPayload(64); // what core's HELLO sets
        c.bind(new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
                if (type == FrameType.MESSAGE) {
                    c.send(TestFrames.message(streamId, new byte[8]), null, true); // the call's reply, flush asked for
                }
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        });
        int every = BurstFlushRule.EVERY;
        try {
            c.receiveMade(TestFrames.hello()); // the HELLO a bridge makes first
            c.endReadBurst();
            for (int i = 1; i < every; i++) {
                c.receiveMade(TestFrames.message(2 * i + 1, new byte[4]));
            }
            assertEquals(0, flushedMessages(ch), "replies before the " + every + "th wait for the burst");
            c.receiveMade(TestFrames.message(2 * every + 1, new byte[4]));
            assertEquals(every, flushedMessages(ch), "the " + every + "th reply flushes every one so far");
            c.receiveMade(TestFrames.message(2 * every + 3, new byte[4]));
            assertEquals(0, flushedMessages(ch));
            c.endReadBurst(); // the bridge ends the burst when the codec's read is done
            assertEquals(1, flushedMessages(ch), "the burst's end flushes the rest");
        } finally {
            ch.flush(); // replies still waiting, if an assertion failed, are released rather than failed by the close
            ch.finishAndReleaseAll();
        }
    }

    /**
     * The handler hears a read burst start once, however many reads it spans, and end once, after the burst's
     * flush; a burst's end with no burst open tells it nothing.
     */
    @Test
    void theHandlerHearsEachReadBurstStartAndEndOnce() {
        EmbeddedChannel ch = new EmbeddedChannel();
        TcpFrameConnection c = new TcpFrameConnection(ch, true);
        StringBuilder heard = new StringBuilder();
        c.bind(new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
            }

            @Override
            public void onReadBurstStart() {
                heard.append("start;");
            }

            @Override
            public void onReadBurstEnd() {
                heard.append("end, flushed ").append(flushedMessages(ch)).append(';');
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        });
        try {
            c.endReadBurst();
            assertEquals("", heard.toString(), "no burst was open");
            c.beginReadBurst();
            c.send(TestFrames.message(1, new byte[8]), null, true);
            c.beginReadBurst(); // a second read before the read-complete
            c.endReadBurst();
            c.endReadBurst(); // the channel's close after it
            assertEquals("start;end, flushed 1;", heard.toString());
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** A server connection over {@code ch} bound to a handler that ignores what it reads. */
    private static TcpFrameConnection boundServerConnection(EmbeddedChannel ch) {
        TcpFrameConnection c = new TcpFrameConnection(ch, true);
        c.bind(new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        });
        return c;
    }

    /** Takes (and releases) what the channel has flushed so far; returns how many buffers that was. */
    private static int flushedMessages(EmbeddedChannel ch) {
        int n = 0;
        for (Object m; (m = ch.readOutbound()) != null; ) {
            ((ByteBuf) m).release();
            n++;
        }
        return n;
    }
}
