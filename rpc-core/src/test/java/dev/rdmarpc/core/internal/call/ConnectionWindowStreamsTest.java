package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.internal.flow.ConnectionWindow;
import dev.rdmarpc.core.internal.flow.SendWindows;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.ProtocolException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection window (PROTOCOL.md "Flow control") between a sender's {@link OutboundFlow}s and a receiver's
 * {@link InboundMessages}: both count each message the same (its cost, at least 128 bytes), the sender stops where the
 * receiver's window ends, credit returns what was taken, a peer that does not keep the window is charged as bytes
 * arrive and refused past it, and the memory share refuses a connection over it.
 */
class ConnectionWindowStreamsTest {
    private static final int WINDOW = 64 << 10;
    private final SlabPool pool = new SlabPool(0, true);
    private final List<Integer> credits = new ArrayList<>();

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    private ConnectionWindow strictWindow() {
        ConnectionWindow w = new ConnectionWindow(WINDOW, credits::add, null);
        w.peerKeepsWindow();
        return w;
    }

    private static int feed(InboundMessages in, byte[] frame) {
        MemorySegment seg = Arena.ofAuto().allocate(frame.length);
        MemorySegment.copy(frame, 0, seg, ValueLayout.JAVA_BYTE, 0, frame.length);
        return in.onFrame(FrameHeader.flags(seg, 0), seg, null, FrameHeader.SIZE, frame.length - FrameHeader.SIZE, true);
    }

    /** A MESSAGE frame with {@code flags}: a BEGIN announcing {@code total} bytes, carrying {@code data} of them. */
    private static byte[] message(int flags, long total, int data) {
        boolean begin = (flags & FrameFlags.BEGIN) != 0;
        int payload = (begin ? 4 : 0) + data;
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload).put((byte) 3).put((byte) flags).putShort((short) 0).putInt(1).putInt(0);
        if (begin) {
            b.putInt((int) total);
        }
        return b.array();
    }

    @Test
    void senderAndReceiverCountEmptyMessagesAlikeAndCreditRefillsTheWindow() {
        FlowControlTest.CollectingConnection c = new FlowControlTest.CollectingConnection();
        ConnectionSendWindow send = new ConnectionSendWindow(Long.MAX_VALUE);
        send.peerWindow(WINDOW);
        OutboundFlow out = new OutboundFlow(pool);
        out.bind(c, send, 1, 1 << 20, 1 << 20);
        ConnectionWindow window = strictWindow();
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 1 << 20, window);
        for (int i = 0; i < 2_000; i++) {
            out.message(MessageFramer.frame(pool, FlowControlTest.BYTES, new byte[0]), null, false, true);
        }
        int fit = WINDOW / FlowCapability.MIN_MESSAGE_CHARGE;
        assertEquals(fit, c.frames.size(), "the sender stops at the connection window, each empty message charged 128");
        for (byte[] f : c.frames) {
            assertEquals(InboundMessages.COMPLETED, feed(in, f), "the receiver counts the same: no violation");
        }
        assertEquals(WINDOW, window.held());
        assertThrows(ProtocolException.class, () -> feed(in, message(FrameFlags.BEGIN | FrameFlags.END, 0, 0)),
                "a peer that keeps the window and sends past it breaks the protocol");
        assertTrue(in.queueCapacity() >= fit - 1, "the queue grew to hold them: " + in.queueCapacity());
        for (SlabBuffer m = in.poll(); m != null; m = in.poll()) {
            m.release();
        }
        assertEquals(0, window.held());
        assertEquals(WINDOW, credits.stream().mapToInt(Integer::intValue).sum(), "what the messages were charged comes back");
        assertTrue(credits.size() <= 1 + WINDOW / 2 / FlowCapability.MIN_MESSAGE_CHARGE,
                "a WINDOW per message only while the sender has less than half the window left: " + credits.size());
        assertEquals(0, in.queueCapacity(), "drained, the queue let its grown storage go");
        c.frames.clear();
        for (int credit : credits) {
            send.grant(credit);
        }
        out.onConnectionWritable();
        assertEquals(fit, c.frames.size(), "the credit lets the sender go on");
        out.discard();
        in.releaseAll();
    }

    @Test
    void aMessageTakesItsWholeChargeBeforeItsFirstFrameAndTheReceiverAtItsBegin() {
        FlowControlTest.CollectingConnection c = new FlowControlTest.CollectingConnection();
        ConnectionSendWindow send = new ConnectionSendWindow(Long.MAX_VALUE);
        send.peerWindow(WINDOW);
        OutboundFlow a = new OutboundFlow(pool);
        OutboundFlow b = new OutboundFlow(pool);
        a.bind(c, send, 1, 1 << 20, 1000);
        b.bind(c, send, 3, 1 << 20, 1000);
        a.message(MessageFramer.frame(pool, FlowControlTest.BYTES, new byte[40_000]), null, false, true);
        assertEquals(WINDOW - 40_004, SendWindows.left(send), "taken whole before the first 1000-byte frame");
        b.message(MessageFramer.frame(pool, FlowControlTest.BYTES, new byte[40_000]), null, false, true);
        assertEquals(WINDOW - 40_004, SendWindows.left(send), "a message the window cannot cover whole waits: begun messages never block each other");
        int framesOfA = c.frames.size();
        assertEquals(41, framesOfA, "the first message went out whole");
        ConnectionWindow window = strictWindow();
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 1 << 20, window);
        assertEquals(InboundMessages.PARTIAL, feed(in, c.frames.get(0)));
        assertEquals(40_004, window.held(), "the receiver charges the whole message at its BEGIN frame");
        for (int i = 1; i < framesOfA; i++) {
            feed(in, c.frames.get(i));
        }
        assertEquals(40_004, window.held());
        in.poll().release();
        assertEquals(List.of(40_004), credits, "over half the window owed: credited at once");
        send.grant(credits.get(0));
        b.onConnectionWritable();
        assertEquals(2 * framesOfA, c.frames.size(), "the credit let the waiting message go");
        in.releaseAll();
    }

    @Test
    void aPeerThatDoesNotKeepTheWindowIsChargedAsBytesArriveAndRefusedPastIt() {
        ConnectionWindow window = new ConnectionWindow(WINDOW, credits::add, null);
        InboundMessages first = new InboundMessages(pool, 1 << 20, -1, 1 << 20, window);
        InboundMessages second = new InboundMessages(pool, 1 << 20, -1, 1 << 20, window);
        assertEquals(InboundMessages.PARTIAL, feed(first, message(FrameFlags.BEGIN, 1 << 20, 8_000)));
        assertTrue(window.held() >= first.assemblingCapacity(),
                "charged what its buffer takes, ahead of its bytes: " + window.held() + " for " + first.assemblingCapacity());
        assertTrue(window.held() >= 8_004 && window.held() <= WINDOW, "held " + window.held());
        int r = InboundMessages.PARTIAL;
        int sent = 0;
        while (r == InboundMessages.PARTIAL) {
            r = feed(second, message(sent == 0 ? FrameFlags.BEGIN : 0, 1 << 20, 8_000));
            sent++;
        }
        assertEquals(InboundMessages.OVER_WINDOW, r, "the message that goes past the window is refused");
        assertTrue(second.refusal().contains("window"), second.refusal());
        assertEquals(0, second.assemblingCapacity(), "and dropped");
        assertTrue(window.held() <= WINDOW, "held " + window.held());
        assertEquals(InboundMessages.PARTIAL, feed(second, message(0, 0, 8_000)), "its later frames are dropped");
        first.releaseAll();
        second.releaseAll();
        assertEquals(0, window.held());
        assertEquals(List.of(), credits, "no connection WINDOW to a peer that does not know it");
    }

    @Test
    void overTheBudgetAConnectionOverItsShareIsRefusedAndAStrictPeerGetsTheChargeBack() {
        boolean[] overBudget = {false};
        ConnectionWindow window = new ConnectionWindow(WINDOW, credits::add,
                (held, more) -> !overBudget[0] || held + more <= 1_000);
        window.peerKeepsWindow();
        InboundMessages in = new InboundMessages(pool, 1 << 20, -1, 1 << 20, window);
        assertEquals(InboundMessages.COMPLETED, feed(in, message(FrameFlags.BEGIN | FrameFlags.END, 40_000, 40_000)));
        overBudget[0] = true;
        assertEquals(InboundMessages.OVER_WINDOW, feed(in, message(FrameFlags.BEGIN | FrameFlags.END, 10, 10)));
        assertTrue(in.refusal().contains("share"), in.refusal());
        assertEquals(40_004, window.held(), "the refused message holds nothing");
        in.poll().release();
        assertEquals(0, window.held());
        assertEquals(40_004 + FlowCapability.MIN_MESSAGE_CHARGE, credits.stream().mapToInt(Integer::intValue).sum(),
                "the peer gets back what it charged itself for both messages");
        assertFalse(window.held() > 0);
        in.releaseAll();
    }
}
