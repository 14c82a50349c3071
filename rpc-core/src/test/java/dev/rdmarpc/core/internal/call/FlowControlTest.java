package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The send side's chunking under a window against the receive side's reassembly and credits. */
class FlowControlTest {
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    /** Bytes as a message: marshals a byte[] as itself. */
    static final Marshaller<byte[]> BYTES = new Marshaller<>() {
        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target) {
            MemorySegment.copy(value, 0, target, ValueLayout.JAVA_BYTE, 0, value.length);
        }

        @Override
        public byte[] parse(MemorySegment source) {
            return source.toArray(ValueLayout.JAVA_BYTE);
        }
    };

    /** Collects what a stream sends, as whole frames copied out of the slabs. */
    static class CollectingConnection implements FrameConnection {
        final List<byte[]> frames = new ArrayList<>();
        boolean writable = true;

        @Override
        public void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
            int len = head.length() + (tail == null ? 0 : tail.length());
            byte[] all = new byte[len];
            MemorySegment.copy(head.segment(), ValueLayout.JAVA_BYTE, 0, all, 0, head.length());
            if (tail != null) {
                MemorySegment.copy(tail.segment(), ValueLayout.JAVA_BYTE, 0, all, head.length(), tail.length());
                tail.release();
            }
            head.release();
            frames.add(all);
        }

        @Override
        public void flush() {
        }

        @Override
        public boolean isWritable() {
            return writable;
        }

        @Override
        public void setMaxInboundPayload(int maxPayload) {
        }

        @Override
        public int preferredChunkSize() {
            return 1000;
        }

        @Override
        public void close(String reason) {
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public boolean inIoThread() {
            return false;
        }

        @Override
        public SocketAddress remoteAddress() {
            return null;
        }

        @Override
        public SocketAddress localAddress() {
            return null;
        }

        @Override
        public String transportName() {
            return "collect";
        }
    }

    /** {@code n} bytes of a fixed pattern (shared with the other framing tests of this package). */
    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private boolean demand = true;

    private int feed(InboundMessages in, byte[] frame) {
        MemorySegment seg = Arena.ofAuto().allocate(frame.length);
        MemorySegment.copy(frame, 0, seg, ValueLayout.JAVA_BYTE, 0, frame.length);
        FrameHeader.validate(seg, 0, 1 << 20, false);
        assertEquals(FrameType.MESSAGE, FrameHeader.type(seg, 0));
        return in.onFrame(FrameHeader.flags(seg, 0), seg, null, FrameHeader.SIZE, (int) (seg.byteSize() - FrameHeader.SIZE), demand);
    }

    @Test
    void smallMessageGoesAsOneFrameWithoutQueueing() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 65536, 1000);
        out.message(MessageFramer.frame(pool, BYTES, pattern(64)), null, false, true);
        assertEquals(1, c.frames.size());
        assertTrue(out.isEmpty());
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 65536, null);
        assertEquals(InboundMessages.COMPLETED, feed(in, c.frames.get(0)));
        SlabBuffer m = in.poll();
        assertEquals(64, m.length());
        assertEquals(java.util.Arrays.toString(pattern(64)), java.util.Arrays.toString(BYTES.parse(m.content())));
        m.release();
    }

    @Test
    void largeMessageIsChunkedWithinWindowAndReassembled() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        int window = 4096;
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 3, window, 1000);
        byte[] body = pattern(20_000);
        out.message(MessageFramer.frame(pool, BYTES, body), null, true, true);
        assertFalse(out.isEmpty(), "a message over the window waits for credit");
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, window, null);
        int delivered = 0;
        int fed = 0;
        for (int round = 0; round < 100 && delivered == 0; round++) {
            while (fed < c.frames.size()) {
                int r = feed(in, c.frames.get(fed++));
                if (r == InboundMessages.COMPLETED) {
                    delivered++;
                }
            }
            int credit = in.takeCredit();
            if (credit > 0) {
                out.onWindow(credit);
            }
        }
        assertEquals(1, delivered);
        assertTrue(c.frames.size() > 20, "split into chunks of at most 1000 bytes: " + c.frames.size());
        for (byte[] f : c.frames) {
            assertTrue(f.length - FrameHeader.SIZE <= 1000);
        }
        SlabBuffer m = in.poll();
        assertEquals(java.util.Arrays.toString(body), java.util.Arrays.toString(BYTES.parse(m.content())));
        m.release();
        assertTrue(out.isEmpty());
    }

    @Test
    void aBodyThatFitsOneFrameOnlyWithoutItsPrefixGoesWholeAfterAPrefixOnlyBegin() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 5, 65536, 1000);
        byte[] body = pattern(1000);
        out.message(MessageFramer.frame(pool, BYTES, body), null, true, true);
        assertEquals(2, c.frames.size());
        assertEquals(4, c.frames.get(0).length - FrameHeader.SIZE, "the BEGIN frame carries only the length prefix");
        assertEquals(1000, c.frames.get(1).length - FrameHeader.SIZE, "the body goes in one frame");
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 65536, null);
        assertEquals(InboundMessages.PARTIAL, feed(in, c.frames.get(0)));
        assertEquals(InboundMessages.COMPLETED, feed(in, c.frames.get(1)));
        SlabBuffer m = in.poll();
        assertEquals(java.util.Arrays.toString(body), java.util.Arrays.toString(BYTES.parse(m.content())));
        m.release();

        c.frames.clear();
        out.message(MessageFramer.frame(pool, BYTES, pattern(996)), null, true, true);
        assertEquals(1, c.frames.size(), "a body that fits with its prefix still goes in one frame");
        c.frames.clear();
        out.message(MessageFramer.frame(pool, BYTES, pattern(1001)), null, true, true);
        assertEquals(2, c.frames.size());
        assertEquals(1000, c.frames.get(0).length - FrameHeader.SIZE, "a body larger than a frame fills the first");
        assertTrue(out.isEmpty());
    }

    @Test
    void readerThatStopsReadingStopsTheSender() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        int window = 65536;
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, window, 1 << 20);
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, window, null);
        demand = false;
        for (int i = 0; i < 100; i++) {
            out.message(MessageFramer.frame(pool, BYTES, pattern(4000)), null, false, true);
        }
        for (int i = 0; i < c.frames.size(); i++) {
            feed(in, c.frames.get(i));
            int credit = in.takeCredit();
            if (credit > 0) {
                out.onWindow(credit);
            }
        }
        assertTrue(c.frames.size() < 20, "only about one window's worth went out: " + c.frames.size());
        assertTrue(out.queuedBytes() > 300_000, "the rest waits at the sender: " + out.queuedBytes());
        assertFalse(out.isReady());
        out.discard();
        in.releaseAll();
    }

    @Test
    void oversizeAndWindowViolationsAreDetected() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 1 << 20, 1 << 20);
        out.message(MessageFramer.frame(pool, BYTES, pattern(5000)), null, false, true);
        InboundMessages small = new InboundMessages(pool, 1000, -1, 1 << 20, null);
        assertEquals(InboundMessages.TOO_LARGE, feed(small, c.frames.get(0)));
        assertEquals(5000, small.rejectedSize());
        InboundMessages tinyWindow = new InboundMessages(pool, 1 << 20, -1, 100, null);
        ProtocolException e = assertThrows(ProtocolException.class, () -> feed(tinyWindow, c.frames.get(0)));
        assertTrue(e.getMessage().contains("flow-control window"), e.getMessage());
    }

    /** A MESSAGE frame: header, then (on BEGIN) the 4-byte announced size, then {@code data} bytes of a pattern. */
    private static byte[] messageFrame(int flags, long announced, int data) {
        boolean begin = (flags & dev.rdmarpc.core.protocol.FrameFlags.BEGIN) != 0;
        int payload = (begin ? 4 : 0) + data;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(FrameHeader.SIZE + payload).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload).put((byte) FrameType.MESSAGE).put((byte) flags).putShort((short) 0).putInt(1).putInt(0);
        if (begin) {
            b.putInt((int) announced);
        }
        b.put(pattern(data));
        return b.array();
    }

    @Test
    void announcedSizeIsNotAllocatedBeforeItsBytesArrive() {
        int announced = 1 << 20;
        InboundMessages in = new InboundMessages(pool, 4 << 20, -1, 2 << 20, null);
        assertEquals(InboundMessages.PARTIAL, feed(in, messageFrame(dev.rdmarpc.core.protocol.FrameFlags.BEGIN, announced, 100)));
        assertTrue(in.assemblingCapacity() <= 1024, "100 bytes received hold " + in.assemblingCapacity());
        assertTrue(pool.inUseBytes() <= 1024, "pool bytes in use: " + pool.inUseBytes());
        int received = 100;
        int grown = 0;
        int lastCapacity = in.assemblingCapacity();
        while (received < announced) {
            int n = Math.min(16_000, announced - received);
            boolean end = received + n == announced;
            int r = feed(in, messageFrame(end ? dev.rdmarpc.core.protocol.FrameFlags.END : 0, 0, n));
            received += n;
            if (!end) {
                assertEquals(InboundMessages.PARTIAL, r);
                assertTrue(in.assemblingCapacity() <= 8L * received,
                        received + " bytes received hold " + in.assemblingCapacity());
                if (in.assemblingCapacity() != lastCapacity) {
                    grown++;
                    assertTrue(in.assemblingCapacity() >= 2 * lastCapacity, "each growth at least doubles");
                    lastCapacity = in.assemblingCapacity();
                }
            } else {
                assertEquals(InboundMessages.COMPLETED, r);
            }
        }
        assertTrue(grown <= 12, "grew " + grown + " times");
        SlabBuffer m = in.poll();
        assertEquals(announced, m.length());
        byte[] first = pattern(100);
        assertEquals(first[99], m.segment().get(ValueLayout.JAVA_BYTE, 99));
        assertEquals(pattern(16_000)[0], m.segment().get(ValueLayout.JAVA_BYTE, 100), "bytes of later frames follow in order");
        m.release();
    }

    @Test
    void aMessageArrivingInOneFrameIsAllocatedOnce() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 1 << 20, 1 << 20);
        out.message(MessageFramer.frame(pool, BYTES, pattern(300_000)), null, false, true);
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 1 << 20, null);
        assertEquals(InboundMessages.COMPLETED, feed(in, c.frames.get(0)));
        SlabBuffer m = in.poll();
        assertEquals(300_000, m.length());
        assertEquals(java.util.Arrays.toString(pattern(300_000)), java.util.Arrays.toString(BYTES.parse(m.content())));
        m.release();
    }

    @Test
    void windowPastTwoToThe31IsAProtocolError() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, Integer.MAX_VALUE - 10, 1 << 20);
        out.onWindow(10);
        ProtocolException e = assertThrows(ProtocolException.class, () -> out.onWindow(1));
        assertTrue(e.getMessage().contains("2^31-1"), e.getMessage());
        assertThrows(ProtocolException.class, () -> out.onWindow(0));
        assertThrows(ProtocolException.class, () -> out.onWindow(-5));
    }

    @Test
    void aConnectionThatCannotTakeMoreGetsNothingUntilItDrains() {
        CollectingConnection c = new CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 1 << 20, 1 << 20);
        c.writable = false;
        assertFalse(out.isReady(), "not ready while the connection is full");
        out.message(MessageFramer.frame(pool, BYTES, pattern(64)), null, false, true);
        out.control(MessageFramer.frame(pool, BYTES, pattern(8)), true);
        assertEquals(0, c.frames.size(), "nothing goes to a full connection");
        assertFalse(out.isEmpty());
        c.writable = true;
        out.onConnectionWritable();
        assertEquals(2, c.frames.size(), "the message, then what was queued behind it");
        assertTrue(out.isEmpty());
        assertTrue(out.isReady());
    }
}
