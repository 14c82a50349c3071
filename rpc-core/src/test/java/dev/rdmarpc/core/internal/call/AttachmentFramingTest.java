package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.core.testing.LockCheckingInterceptors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A message with an attachment through the send side's chunking and the receive side's reassembly and limits. */
class AttachmentFramingTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final AtomicInteger releases = new AtomicInteger();
    private final Runnable onReleased = LockCheckingInterceptors.checkedRelease(releases::incrementAndGet);
    private final AtomicInteger closedHook = new AtomicInteger();

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    /** The release callback runs on the shared callback executor: waits for it, then checks it ran once. */
    private void assertReleasedOnce(String what) {
        Await.until(() -> releases.get() > 0, what);
        assertEquals(1, releases.get(), what);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** The frames a stream sends for {@code message} with {@code attachment} (chunks of 1000, one large window). */
    private FlowControlTest.CollectingConnection send(byte[] message, MemorySegment attachment) {
        FlowControlTest.CollectingConnection c = new FlowControlTest.CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.onAttachmentFailed(s -> closedHook.incrementAndGet());
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 1 << 20, 1000);
        OutgoingAttachment att = OutgoingAttachment.of(attachment, onReleased);
        out.message(MessageFramer.frameWithAttachment(pool, FlowControlTest.BYTES, message, att.size()), att, false, true);
        return c;
    }

    private static int feed(InboundMessages in, byte[] frame) {
        MemorySegment seg = MemorySegment.ofArray(frame);
        return in.onFrame(FrameHeader.flags(seg, 0), seg, null, FrameHeader.SIZE, frame.length - FrameHeader.SIZE, true);
    }

    @Test
    void messageAndAttachmentArriveInOneBufferSplitWhereTheMessageEnds() {
        byte[] message = pattern(100, 1);
        byte[] attachment = pattern(10_000, 2);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(attachment.length);
            MemorySegment.copy(attachment, 0, seg, ValueLayout.JAVA_BYTE, 0, attachment.length);
            var c = send(message, seg);
            assertReleasedOnce("the callback ran once the last chunk was copied out");
            assertTrue(c.frames.size() > 10, "sent in chunks: " + c.frames.size());
            int first = FrameHeader.flags(MemorySegment.ofArray(c.frames.get(0)), 0);
            assertEquals(FrameFlags.BEGIN | FrameFlags.ATTACHMENT, first);
            InboundMessages in = new InboundMessages(pool, 1 << 20, 1 << 20, 1 << 20, null);
            for (int i = 0; i < c.frames.size() - 1; i++) {
                assertEquals(InboundMessages.PARTIAL, feed(in, c.frames.get(i)));
            }
            assertEquals(InboundMessages.COMPLETED, feed(in, c.frames.get(c.frames.size() - 1)));
            SlabBuffer buf = in.poll();
            assertEquals(100, in.polledSplit());
            Attachment a = Attachments.received(buf, in.polledSplit(), null);
            assertArrayEquals(message, buf.segment().asSlice(0, 100).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(attachment, a.toByteArray());
            assertTrue(a.segment().isReadOnly());
            a.release();
            a.release(); // idempotent
            assertTrue(a.isReleased());
        }
    }

    @Test
    void anEmptyAttachmentEndsWithTheMessage() {
        var c = send(pattern(10, 3), MemorySegment.NULL.reinterpret(0));
        assertEquals(1, c.frames.size());
        InboundMessages in = new InboundMessages(pool, 1 << 20, 0, 1 << 20, null);
        assertEquals(InboundMessages.COMPLETED, feed(in, c.frames.get(0)));
        SlabBuffer buf = in.poll();
        assertEquals(10, in.polledSplit());
        Attachment a = Attachments.received(buf, 10, null);
        assertEquals(0, a.size());
        a.release();
        assertReleasedOnce("released once");
    }

    @Test
    void anAttachmentOverTheLimitIsRefusedAtItsFirstFrameAndTheRestDropped() {
        try (Arena arena = Arena.ofConfined()) {
            var c = send(pattern(100, 1), arena.allocate(10_000));
            InboundMessages in = new InboundMessages(pool, 1 << 20, 5_000, 1 << 20, null);
            assertEquals(InboundMessages.TOO_LARGE, feed(in, c.frames.get(0)));
            assertTrue(in.rejectedAttachment());
            assertEquals(10_000, in.rejectedSize());
            assertEquals(0, in.assemblingCapacity(), "nothing allocated for it");
            for (int i = 1; i < c.frames.size(); i++) {
                assertEquals(InboundMessages.PARTIAL, feed(in, c.frames.get(i)));
            }
            assertEquals(0, in.queued());
        }
    }

    @Test
    void attachmentsWhereTheyDoNotBelongAreProtocolErrors() {
        try (Arena arena = Arena.ofConfined()) {
            var c = send(pattern(100, 1), arena.allocate(3_000));
            InboundMessages refusing = new InboundMessages(pool, 1 << 20, -1, 1 << 20, null);
            ProtocolException e = assertThrows(ProtocolException.class, () -> feed(refusing, c.frames.get(0)));
            assertTrue(e.getMessage().contains("takes no attachments"), e.getMessage());

            InboundMessages in = new InboundMessages(pool, 1 << 20, 1 << 20, 1 << 20, null);
            feed(in, c.frames.get(0));
            byte[] second = c.frames.get(1).clone();
            second[5] |= FrameFlags.ATTACHMENT;
            e = assertThrows(ProtocolException.class, () -> feed(in, second));
            assertTrue(e.getMessage().contains("ATTACHMENT flag on a MESSAGE continuation"), e.getMessage());
            in.releaseAll();
        }
    }

    @Test
    @SuppressWarnings("MustBeClosedChecker") // closed in the middle of the test, which is the point
    void aSegmentClosedBeforeItsBytesLeaveFailsTheSendAndReleasesOnce() {
        FlowControlTest.CollectingConnection c = new FlowControlTest.CollectingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        out.onAttachmentFailed(s -> closedHook.incrementAndGet());
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 200, 1000); // room for the message, none for the attachment
        Arena arena = Arena.ofConfined();
        OutgoingAttachment att = OutgoingAttachment.of(arena.allocate(5_000), onReleased);
        out.message(MessageFramer.frameWithAttachment(pool, FlowControlTest.BYTES, pattern(192, 1), att.size()), att, false, true);
        assertEquals(1, c.frames.size(), "the message went, the attachment waits for window");
        arena.close();
        out.onWindow(100_000);
        assertEquals(1, closedHook.get(), "the stream was told");
        assertReleasedOnce("released once");
        assertTrue(out.isEmpty());
        assertEquals(1, c.frames.size(), "no byte of the closed segment was sent");
    }

    /** A transport that sends application memory itself, and refuses it (as an RDMA device refusing a registration). */
    static final class RefusingConnection extends FlowControlTest.CollectingConnection {
        int refused;

        @Override
        public boolean sendsForeignMemory() {
            return true;
        }

        @Override
        public void send(SlabBuffer head, MemorySegment body, Runnable done, boolean flush) {
            refused++;
            head.release();
            done.run();
            throw new IllegalStateException("cannot register a " + body.byteSize() + "-byte attachment for RDMA: RLIMIT_MEMLOCK");
        }
    }

    @Test
    void aTransportRefusingTheMemoryFailsThatCallWithResourceExhaustedAndReleasesOnce() {
        RefusingConnection c = new RefusingConnection();
        OutboundFlow out = new OutboundFlow(pool);
        java.util.List<dev.rdmarpc.core.Status> failures = new java.util.ArrayList<>();
        out.onAttachmentFailed(failures::add);
        out.bind(c, new ConnectionSendWindow(Long.MAX_VALUE), 1, 1 << 20, 1000);
        try (Arena arena = Arena.ofConfined()) {
            OutgoingAttachment att = OutgoingAttachment.of(arena.allocate(5_000), onReleased);
            out.message(MessageFramer.frameWithAttachment(pool, FlowControlTest.BYTES, pattern(10, 1), att.size()), att, false, true);
        }
        assertEquals(1, c.refused);
        assertEquals(1, failures.size());
        assertEquals(dev.rdmarpc.core.Status.Code.RESOURCE_EXHAUSTED, failures.get(0).getCode());
        assertTrue(failures.get(0).getDescription().contains("RLIMIT_MEMLOCK"), failures.get(0)::toString);
        assertReleasedOnce("released once");
        assertTrue(out.isEmpty());
        assertEquals(1, c.frames.size(), "only the message's own frame went out");
    }
}
