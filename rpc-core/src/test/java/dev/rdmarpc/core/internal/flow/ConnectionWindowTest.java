package dev.rdmarpc.core.internal.flow;

import dev.rdmarpc.core.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection window's BLOCKED handshake (PROTOCOL.md "Flow control"): a blocked sender says so once and gets the
 * credit the receiver held back; a repeated BLOCKED is charged; a peer that does not keep the window may not send one.
 */
class ConnectionWindowTest {
    private static final int WINDOW = 64 << 10;
    private final List<Integer> credits = new ArrayList<>();

    private ConnectionWindow strictWindow() {
        ConnectionWindow w = new ConnectionWindow(WINDOW, credits::add, null);
        w.peerKeepsWindow();
        return w;
    }

    @Test
    void aBlockedSenderSaysSoOnceAndGetsTheCreditHeldBack() {
        // a window raised to fit its largest message: after a small message the credit owed (under half the window)
        // is held back, and the large message could wait for it for ever without the sender's BLOCKED
        ConnectionWindow receiver = strictWindow();
        ConnectionSendWindow sender = new ConnectionSendWindow(Long.MAX_VALUE);
        int[] blockedSent = {0};
        sender.onBlocked(() -> blockedSent[0]++);
        sender.peerWindow(WINDOW);

        assertTrue(sender.tryTake(1024, 1024));
        assertTrue(receiver.charge(1024));
        receiver.release(1024);
        assertEquals(List.of(), credits, "1 KiB owed is not yet worth a frame");

        long large = WINDOW - 64;
        assertFalse(sender.tryTake(large, 4096));
        assertFalse(sender.tryTake(large, 4096), "asked again before any credit came");
        assertEquals(1, blockedSent[0], "one BLOCKED until the receiver's next connection WINDOW");

        assertTrue(receiver.peerBlocked(), "the BLOCKED has what is owed sent");
        assertEquals(List.of(1024), credits);
        sender.grant(1024);
        assertTrue(sender.tryTake(large, 4096));
        assertTrue(receiver.charge((int) large));
        receiver.release(large);
    }

    @Test
    void aBlockedPeerWithNothingOwedGetsTheNextReleaseAtOnceAndARepeatedBlockedIsCharged() {
        ConnectionWindow receiver = strictWindow();
        assertTrue(receiver.charge(1024));
        assertTrue(receiver.peerBlocked(), "a first BLOCKED is expected, even with nothing owed");
        assertFalse(receiver.peerBlocked(), "a second one before any credit went is one too many");
        assertEquals(List.of(), credits);
        receiver.release(1024);
        assertEquals(List.of(1024), credits, "released while the peer is blocked: credited at once");
        assertTrue(receiver.charge(1024));
        receiver.release(1024);
        assertEquals(List.of(1024), credits, "the peer got its credit: back to holding small amounts");
        assertTrue(receiver.peerBlocked(), "one BLOCKED more is allowed per connection WINDOW sent");
        assertEquals(List.of(1024, 1024), credits, "and it has what is owed sent at once");
    }

    @Test
    void blockedFromAPeerThatDoesNotKeepTheWindowIsAProtocolError() {
        ConnectionWindow receiver = new ConnectionWindow(WINDOW, credits::add, null);
        assertThrows(ProtocolException.class, receiver::peerBlocked);
    }
}
