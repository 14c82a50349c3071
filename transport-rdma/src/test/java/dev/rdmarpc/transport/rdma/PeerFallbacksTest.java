package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-peer memory of failed upgrades, on a clock the test moves. */
class PeerFallbacksTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final long expiry = TimeUnit.SECONDS.toNanos(300);

    @Test
    void aPeerIsRememberedUntilItsEntryExpires() throws UnknownHostException {
        PeerFallbacks memory = new PeerFallbacks(expiry, 16, now::get);
        InetAddress peer = InetAddress.getByName("10.0.0.1");
        assertFalse(memory.isRemembered(peer));
        assertTrue(memory.remember(peer), "a new peer");
        assertFalse(memory.remember(peer), "already remembered");
        assertTrue(memory.isRemembered(peer));
        assertFalse(memory.isRemembered(InetAddress.getByName("10.0.0.2")), "another peer");
        now.addAndGet(expiry - 1);
        assertTrue(memory.isRemembered(peer), "just before expiry");
        now.addAndGet(1);
        assertFalse(memory.isRemembered(peer), "expired");
        assertEquals(0, memory.size());
    }

    @Test
    void aNewFailureStartsTheExpiryAgain() throws UnknownHostException {
        PeerFallbacks memory = new PeerFallbacks(expiry, 16, now::get);
        InetAddress peer = InetAddress.getByName("10.0.0.1");
        memory.remember(peer);
        now.addAndGet(expiry / 2);
        memory.remember(peer);
        now.addAndGet(expiry / 2 + 1);
        assertTrue(memory.isRemembered(peer));
    }

    @Test
    void theLeastRecentlyFailedPeerIsForgottenFirstWhenFull() throws UnknownHostException {
        PeerFallbacks memory = new PeerFallbacks(expiry, 2, now::get);
        InetAddress a = InetAddress.getByName("10.0.0.1");
        InetAddress b = InetAddress.getByName("10.0.0.2");
        InetAddress c = InetAddress.getByName("10.0.0.3");
        memory.remember(a);
        memory.remember(b);
        memory.remember(a); // a failed again: b is now the oldest
        memory.remember(c);
        assertTrue(memory.isRemembered(a));
        assertFalse(memory.isRemembered(b));
        assertTrue(memory.isRemembered(c));
        assertEquals(2, memory.size());
    }

    @Test
    void zeroExpiryRemembersNothingAndUnknownPeersAreIgnored() throws UnknownHostException {
        PeerFallbacks off = new PeerFallbacks(0, 16, now::get);
        InetAddress peer = InetAddress.getByName("10.0.0.1");
        assertFalse(off.remember(peer));
        assertFalse(off.isRemembered(peer));
        PeerFallbacks on = new PeerFallbacks(expiry, 16, now::get);
        assertFalse(on.remember(null));
        assertFalse(on.isRemembered(null));
        assertEquals(peer, PeerFallbacks.hostOf(new InetSocketAddress(peer, 5000)));
        assertEquals(null, PeerFallbacks.hostOf(null));
        assertThrows(IllegalArgumentException.class, () -> new PeerFallbacks(expiry, 0, now::get));
    }
}
