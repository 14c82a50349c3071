package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.protocol.FrameFlags;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A MESSAGE frame offered with the transport's buffer that holds it: a whole message that fills at least half of the
 * buffer is queued as a retained slice of it (no copy), everything else is copied as before.
 */
class InboundMessagesKeptFrameTest {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** The default size of an RDMA shared-receive-queue buffer. */
    private static final int RECEIVE_BUFFER = 8192;
    /** Where the frame's payload starts in its receive buffer (behind other frames of the same SEND, say). */
    private static final int AT = 48;
    private static final int WINDOW = 1 << 20;

    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + seed);
        }
        return b;
    }

    /** Writes a MESSAGE payload (length prefix, attachment length when {@code attachment >= 0}, bytes) at {@code at}. */
    private static int writePayload(SlabBuffer holder, int at, byte[] message, byte[] attachment) {
        MemorySegment seg = holder.segment();
        int p = at;
        seg.set(INT, p, message.length);
        p += 4;
        if (attachment != null) {
            seg.set(INT, p, attachment.length);
            p += 4;
        }
        MemorySegment.copy(message, 0, seg, ValueLayout.JAVA_BYTE, p, message.length);
        p += message.length;
        if (attachment != null) {
            MemorySegment.copy(attachment, 0, seg, ValueLayout.JAVA_BYTE, p, attachment.length);
            p += attachment.length;
        }
        return p - at;
    }

    private static int offer(InboundMessages in, int flags, SlabBuffer holder, int length) {
        return in.onFrame(flags, holder.segment(), holder, AT, length, true);
    }

    private static boolean inside(SlabBuffer polled, SlabBuffer holder) {
        return polled.address() >= holder.address()
                && polled.address() + polled.length() <= holder.address() + holder.capacity();
    }

    private static byte[] bytes(SlabBuffer b, int from, int to) {
        return b.segment().asSlice(from, to - from).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void aWholeMessageFillingHalfItsReceiveBufferIsKeptThereWithoutACopy() {
        byte[] message = pattern(RECEIVE_BUFFER / 2, 1);
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, message, null);
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        long inUseBefore = pool.inUseBuffers();

        assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.BEGIN | FrameFlags.END, holder, len));
        assertTrue(in.keptHolder());
        assertEquals(2, holder.refCnt(), "the queued message holds a reference of its own");
        assertEquals(inUseBefore, pool.inUseBuffers(), "no buffer was allocated for the message");
        assertTrue(holder.release() == false, "the transport's release after the call leaves the bytes alive");

        SlabBuffer polled = in.poll();
        assertTrue(inside(polled, holder), "the message is read where the transport received it");
        assertEquals(holder.address() + AT + 4, polled.address());
        assertEquals(message.length, polled.length());
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(-1, in.polledSplit());
        assertFalse(in.polledCompressed());
        assertTrue(polled.release(), "releasing the message drops the last reference to the receive buffer");
    }

    @Test
    void flowControlCreditIsTheSameForAKeptMessageAsForACopiedOne() {
        int window = 16 * 1024;
        byte[] message = pattern(6000, 2);
        InboundMessages keeping = new InboundMessages(pool, window, -1, window, null);
        InboundMessages copying = new InboundMessages(pool, window, -1, window, null);
        for (int round = 0; round < 5; round++) {
            SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
            int len = writePayload(holder, AT, message, null);
            assertEquals(InboundMessages.COMPLETED, offer(keeping, FrameFlags.BEGIN | FrameFlags.END, holder, len));
            assertEquals(InboundMessages.COMPLETED,
                    copying.onFrame(FrameFlags.BEGIN | FrameFlags.END, holder.segment(), null, AT, len, true));
            assertTrue(keeping.keptHolder());
            holder.release();
            assertEquals(copying.takeCredit(), keeping.takeCredit(), "credit owed before the application reads");
            SlabBuffer a = keeping.poll();
            SlabBuffer b = copying.poll();
            assertArrayEquals(b.content().toArray(ValueLayout.JAVA_BYTE), a.content().toArray(ValueLayout.JAVA_BYTE));
            a.release();
            b.release();
            assertEquals(copying.takeCredit(), keeping.takeCredit(), "credit owed once it was read");
        }
    }

    @Test
    void aSmallMessageIsCopiedAndDoesNotPinItsReceiveBuffer() {
        byte[] message = pattern(100, 3);
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, message, null);
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.BEGIN | FrameFlags.END, holder, len));
        assertFalse(in.keptHolder());
        assertEquals(1, holder.refCnt());
        assertTrue(holder.release(), "the receive buffer is free as soon as the transport is done with it");
        SlabBuffer polled = in.poll();
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        polled.release();
    }

    @Test
    void aBufferSizedToItsPayloadIsAlwaysKept() {
        byte[] message = pattern(1 << 20, 4);
        SlabBuffer destination = pool.allocate(message.length + 4);
        MemorySegment seg = destination.segment();
        seg.set(INT, 0, message.length);
        MemorySegment.copy(message, 0, seg, ValueLayout.JAVA_BYTE, 4, message.length);
        InboundMessages in = new InboundMessages(pool, 2 << 20, -1, 2 << 20, null);
        assertEquals(InboundMessages.COMPLETED, in.onFrame(FrameFlags.BEGIN | FrameFlags.END, seg, destination, 0,
                message.length + 4, true));
        assertTrue(in.keptHolder());
        destination.release();
        SlabBuffer polled = in.poll();
        assertEquals(destination.address() + 4, polled.address());
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        polled.release();
    }

    @Test
    void aBodyArrivingWholeAfterAPrefixOnlyBeginIsKeptWithTheSameCredit() {
        byte[] message = pattern(1 << 20, 9);
        int window = 4 << 20;
        SlabBuffer prefix = pool.allocate(RECEIVE_BUFFER);
        prefix.segment().set(INT, AT, message.length);
        SlabBuffer destination = pool.allocate(message.length);
        MemorySegment.copy(message, 0, destination.segment(), ValueLayout.JAVA_BYTE, 0, message.length);
        InboundMessages in = new InboundMessages(pool, window, -1, window, null);
        InboundMessages copying = new InboundMessages(pool, window, -1, window, null);
        long inUseBefore = pool.inUseBuffers();

        assertEquals(InboundMessages.PARTIAL, offer(in, FrameFlags.BEGIN, prefix, 4));
        assertEquals(inUseBefore, pool.inUseBuffers(), "a BEGIN with only the prefix takes no buffer");
        assertEquals(InboundMessages.COMPLETED,
                in.onFrame(FrameFlags.END, destination.segment(), destination, 0, message.length, true));
        assertTrue(in.keptHolder());
        assertEquals(InboundMessages.PARTIAL, copying.onFrame(FrameFlags.BEGIN, prefix.segment(), null, AT, 4, true));
        assertEquals(InboundMessages.COMPLETED,
                copying.onFrame(FrameFlags.END, destination.segment(), null, 0, message.length, true));
        prefix.release();
        destination.release();
        assertEquals(copying.takeCredit(), in.takeCredit(), "credit owed before the application reads");

        SlabBuffer polled = in.poll();
        assertEquals(destination.address(), polled.address(), "the message is read where the transport received it");
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        SlabBuffer copied = copying.poll();
        polled.release();
        copied.release();
        assertEquals(copying.takeCredit(), in.takeCredit(), "credit owed once it was read");
    }

    @Test
    void aBodySplitAfterAPrefixOnlyBeginIsReassembledByCopy() {
        byte[] message = pattern(6000, 10);
        SlabBuffer prefix = pool.allocate(RECEIVE_BUFFER);
        prefix.segment().set(INT, AT, message.length);
        SlabBuffer first = pool.allocate(RECEIVE_BUFFER);
        SlabBuffer second = pool.allocate(RECEIVE_BUFFER);
        MemorySegment.copy(message, 0, first.segment(), ValueLayout.JAVA_BYTE, AT, 4000);
        MemorySegment.copy(message, 4000, second.segment(), ValueLayout.JAVA_BYTE, AT, 2000);
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        assertEquals(InboundMessages.PARTIAL, offer(in, FrameFlags.BEGIN, prefix, 4));
        assertEquals(InboundMessages.PARTIAL, offer(in, 0, first, 4000));
        assertFalse(in.keptHolder());
        assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.END, second, 2000));
        assertFalse(in.keptHolder(), "only the first data frame of a message can hold all of it");
        prefix.release();
        first.release();
        second.release();
        SlabBuffer polled = in.poll();
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        polled.release();
    }

    @Test
    void aMessageInSeveralFramesIsStillReassembledByCopy() {
        byte[] message = pattern(12_000, 5);
        SlabBuffer first = pool.allocate(RECEIVE_BUFFER);
        SlabBuffer second = pool.allocate(RECEIVE_BUFFER);
        MemorySegment a = first.segment();
        a.set(INT, AT, message.length);
        MemorySegment.copy(message, 0, a, ValueLayout.JAVA_BYTE, AT + 4, 6000);
        MemorySegment.copy(message, 6000, second.segment(), ValueLayout.JAVA_BYTE, AT, 6000);
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        assertEquals(InboundMessages.PARTIAL, offer(in, FrameFlags.BEGIN, first, 6004));
        assertFalse(in.keptHolder());
        assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.END, second, 6000));
        assertFalse(in.keptHolder());
        assertEquals(1, first.refCnt());
        assertEquals(1, second.refCnt());
        first.release();
        second.release();
        SlabBuffer polled = in.poll();
        assertArrayEquals(message, polled.content().toArray(ValueLayout.JAVA_BYTE));
        polled.release();
    }

    @Test
    void aKeptMessageWithAnAttachmentSplitsWhereTheMessageEnds() {
        byte[] message = pattern(200, 6);
        byte[] attachment = pattern(5000, 7);
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, message, attachment);
        InboundMessages in = new InboundMessages(pool, WINDOW, WINDOW, WINDOW, null);
        assertEquals(InboundMessages.COMPLETED,
                offer(in, FrameFlags.BEGIN | FrameFlags.END | FrameFlags.ATTACHMENT, holder, len));
        assertTrue(in.keptHolder());
        holder.release();
        SlabBuffer polled = in.poll();
        assertEquals(message.length, in.polledSplit());
        assertEquals(holder.address() + AT + 8, polled.address());
        assertArrayEquals(message, bytes(polled, 0, message.length));
        Attachment received = Attachments.received(polled, in.polledSplit(), null); // takes the buffer over
        assertArrayEquals(attachment, received.toByteArray());
        received.release();
        assertEquals(0, pool.inUseBuffers(), "releasing the attachment released the receive buffer");
    }

    /** Offers a BEGIN with {@code message} and the attachment's length only, copied (the transport keeps no buffer). */
    private static void offerMessagePart(InboundMessages in, byte[] message, int attachmentLength) {
        MemorySegment frame = MemorySegment.ofArray(new byte[8 + message.length]);
        frame.set(INT, 0, message.length);
        frame.set(INT, 4, attachmentLength);
        MemorySegment.copy(message, 0, frame, ValueLayout.JAVA_BYTE, 8, message.length);
        assertEquals(InboundMessages.PARTIAL, in.onFrame(FrameFlags.BEGIN | FrameFlags.ATTACHMENT, frame, null, 0,
                (int) frame.byteSize(), true));
    }

    /** A continuation frame of {@code bytes} at {@link #AT} of a fresh buffer of {@code capacity}, offered with it. */
    private SlabBuffer offerContinuation(InboundMessages in, byte[] bytes, int capacity, boolean end, int expect) {
        SlabBuffer holder = pool.allocate(capacity);
        MemorySegment.copy(bytes, 0, holder.segment(), ValueLayout.JAVA_BYTE, AT, bytes.length);
        assertEquals(expect, offer(in, end ? FrameFlags.END : 0, holder, bytes.length));
        return holder;
    }

    @Test
    void anAttachmentArrivingWholeInItsOwnFrameIsKeptApartFromItsMessage() {
        byte[] message = pattern(9, 11);
        byte[] attachment = pattern(RECEIVE_BUFFER - AT, 12);
        InboundMessages in = new InboundMessages(pool, WINDOW, WINDOW, WINDOW, null);
        offerMessagePart(in, message, attachment.length);
        SlabBuffer holder = offerContinuation(in, attachment, RECEIVE_BUFFER, true, InboundMessages.COMPLETED);
        assertTrue(in.keptHolder(), "the attachment's frame is kept");
        holder.release(); // the transport's reference
        SlabBuffer polled = in.poll();
        SlabBuffer apart = in.polledAttachment();
        assertEquals(message.length, in.polledSplit());
        assertEquals(message.length, polled.length(), "the message's buffer holds only the message");
        assertEquals(holder.address() + AT, apart.address(), "the attachment is where its frame landed");
        Attachment received = Attachments.received(polled, in.polledSplit(), apart);
        byte[] parsed = Attachments.parse(FlowControlTest.BYTES, polled, in.polledSplit(), false, received, apart);
        assertArrayEquals(message, parsed);
        assertArrayEquals(attachment, received.toByteArray());
        assertTrue(received.segment().isReadOnly());
        assertEquals(1, pool.inUseBuffers(), "the message's buffer went with the parse; the frame's stays for the view");
        received.release();
    }

    @Test
    void anAttachmentOverSeveralFramesOrTooSmallForItsBufferIsGatheredByCopy() {
        byte[] message = pattern(9, 13);
        byte[] attachment = pattern(6000, 14);
        InboundMessages in = new InboundMessages(pool, WINDOW, WINDOW, WINDOW, null);
        offerMessagePart(in, message, attachment.length);
        offerContinuation(in, java.util.Arrays.copyOfRange(attachment, 0, 4000), RECEIVE_BUFFER, false,
                InboundMessages.PARTIAL).release();
        offerContinuation(in, java.util.Arrays.copyOfRange(attachment, 4000, 6000), RECEIVE_BUFFER, true,
                InboundMessages.COMPLETED).release();
        assertFalse(in.keptHolder());
        SlabBuffer polled = in.poll();
        assertEquals(null, in.polledAttachment(), "gathered after the message in one buffer");
        Attachment received = Attachments.received(polled, in.polledSplit(), null);
        assertArrayEquals(attachment, received.toByteArray());
        received.release();
        // a whole attachment that fills less than half of its buffer is copied too (it would pin the rest)
        offerMessagePart(in, message, 100);
        offerContinuation(in, pattern(100, 15), RECEIVE_BUFFER, true, InboundMessages.COMPLETED).release();
        assertFalse(in.keptHolder());
        in.poll().release();
        assertEquals(null, in.polledAttachment());
    }

    @Test
    void releasingOrResettingReleasesAttachmentsKeptApart() {
        InboundMessages in = new InboundMessages(pool, WINDOW, WINDOW, WINDOW, null);
        SlabBuffer[] holders = new SlabBuffer[5];
        for (int i = 0; i < holders.length; i++) {
            offerMessagePart(in, pattern(3, i), 7000);
            holders[i] = offerContinuation(in, pattern(7000, i), RECEIVE_BUFFER, true, InboundMessages.COMPLETED);
            assertEquals(2, holders[i].refCnt());
        }
        assertEquals(holders.length, in.queued());
        in.releaseAll();
        for (SlabBuffer h : holders) {
            assertEquals(1, h.refCnt(), "only the transport's reference is left");
            assertTrue(h.release());
        }
        offerMessagePart(in, pattern(3, 9), 7000);
        offerContinuation(in, pattern(7000, 9), RECEIVE_BUFFER, true, InboundMessages.COMPLETED).release();
        in.reset();
        assertEquals(0, in.queued());
    }

    @Test
    void aKeptCompressedMessageKeepsItsFlag() {
        byte[] message = pattern(5000, 8);
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, message, null);
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        assertEquals(InboundMessages.COMPLETED,
                offer(in, FrameFlags.BEGIN | FrameFlags.END | FrameFlags.COMPRESSED, holder, len));
        assertTrue(in.keptHolder());
        holder.release();
        SlabBuffer polled = in.poll();
        assertTrue(in.polledCompressed());
        polled.release();
    }

    @Test
    void releasingEverythingQueuedReleasesKeptMessages() {
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        SlabBuffer[] holders = new SlabBuffer[6];
        for (int i = 0; i < holders.length; i++) {
            holders[i] = pool.allocate(RECEIVE_BUFFER);
            int len = writePayload(holders[i], AT, pattern(7000, i), null);
            assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.BEGIN | FrameFlags.END, holders[i], len));
            assertEquals(2, holders[i].refCnt());
        }
        assertEquals(holders.length, in.queued());
        in.releaseAll(); // what a cancel, a deadline or a closed connection does
        for (SlabBuffer h : holders) {
            assertEquals(1, h.refCnt(), "only the transport's reference is left");
            assertTrue(h.release());
        }
    }

    @Test
    void resettingForTheNextStreamReleasesKeptMessages() {
        InboundMessages in = new InboundMessages(pool, WINDOW, -1, WINDOW, null);
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, pattern(4500, 9), null);
        assertEquals(InboundMessages.COMPLETED, offer(in, FrameFlags.BEGIN | FrameFlags.END, holder, len));
        holder.release();
        in.reset();
        assertFalse(in.keptHolder());
        assertEquals(0, in.queued());
    }

    @Test
    void aMessageOverTheLimitIsRefusedAsBeforeAndNothingIsKept() {
        SlabBuffer holder = pool.allocate(RECEIVE_BUFFER);
        int len = writePayload(holder, AT, pattern(6000, 10), null);
        InboundMessages in = new InboundMessages(pool, 5000, -1, WINDOW, null);
        assertEquals(InboundMessages.TOO_LARGE, offer(in, FrameFlags.BEGIN | FrameFlags.END, holder, len));
        assertFalse(in.keptHolder());
        assertEquals(6000, in.rejectedSize());
        assertEquals(1, holder.refCnt());
        assertEquals(0, in.queued());
        holder.release();
    }
}
