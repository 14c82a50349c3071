package dev.rdmarpc.core.internal.flow;

import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * The receive side of one connection's window (PROTOCOL.md "Flow control"): what the peer's messages hold on this side
 * at once, in window charges ({@link FlowCapability#messageCharge}), capped at the window this side advertised. A
 * message is charged when it begins to arrive and released when the application takes it or it is dropped. A peer
 * that keeps the connection window ({@link #strict}) is charged each message's whole charge at its BEGIN frame and
 * gets the bytes released back in connection WINDOW frames; going past the window is a protocol error. A peer that
 * does not know it (an earlier release's client, or an HTTP/2 client through the bridge) is charged each frame's bytes
 * as they arrive, gets no connection WINDOW, and a message that would take it past the window is refused (the caller
 * ends its stream with RESOURCE_EXHAUSTED). Either way a message is refused too when the server's memory budget is
 * exceeded and this connection holds more than its share ({@link MemoryShare}). Charged on the connection's reading
 * thread, released from any thread.
 */
public final class ConnectionWindow {
    /** Whether a connection may hold {@code more} bytes beyond {@code held}: false when it is over its share. */
    public interface MemoryShare {
        boolean allows(long held, long more);
    }

    private final int window;
    /** Sends a connection WINDOW with the increment it is given. */
    private final IntConsumer credits;
    private final MemoryShare share;
    /** Bytes charged and not yet released. */
    private final AtomicLong held = new AtomicLong();
    /** Bytes charged and not yet credited back to the peer: {@link #held} plus released bytes still owed. */
    private final AtomicLong outstanding = new AtomicLong();
    /** Released bytes not yet credited back to a peer that keeps the window. */
    private final AtomicLong owed = new AtomicLong();
    private volatile boolean strict;
    /** The peer said it is blocked (a BLOCKED) and no credit went back since: what is owed goes back at once. */
    private volatile boolean peerBlocked;
    /** BLOCKEDs the peer may still send: one, plus one per connection WINDOW sent. */
    private final AtomicLong blockedAllowed = new AtomicLong(1);
    /** Whether {@link #charge} last refused for the memory share rather than the window; reading thread only. */
    private boolean refusedForShare;

    /** A window of {@code window} bytes whose credit {@code credits} sends, within {@code share} (null: no budget). */
    public ConnectionWindow(int window, IntConsumer credits, MemoryShare share) {
        this.window = window;
        this.credits = credits;
        this.share = share;
    }

    /** The peer's HELLO said it keeps connection-level flow control (it has a {@link FlowCapability} block). */
    public void peerKeepsWindow() {
        strict = true;
    }

    /** Whether the peer keeps the connection window: messages are charged whole at BEGIN, overruns are protocol errors. */
    public boolean strict() {
        return strict;
    }

    /** The window this side advertised. */
    public int window() {
        return window;
    }

    /** Bytes held now (charged, not released). */
    public long held() {
        return held.get();
    }

    /**
     * Charges {@code bytes}; returns false (nothing charged) when the message they belong to must be refused: the
     * connection over its memory share, or a peer that does not keep the window going past it.
     *
     * @throws ProtocolException when a peer that keeps the window goes past it
     */
    public boolean charge(int bytes) {
        if (bytes == 0) {
            return true;
        }
        long after = outstanding.addAndGet(bytes);
        if (after > window) {
            outstanding.addAndGet(-bytes);
            refusedForShare = false;
            if (strict) {
                throw new ProtocolException("MESSAGE of " + bytes + " window bytes exceeds the connection's flow-control window ("
                        + Math.max(0, window - (after - bytes)) + " of " + window + " left)");
            }
            return false;
        }
        long h = held.get();
        if (share != null && !share.allows(h, bytes)) {
            refusedForShare = true;
            if (strict) {
                credit(bytes); // the peer took the charge when it sent: it gets it back, the message is dropped
            } else {
                outstanding.addAndGet(-bytes);
            }
            return false;
        }
        held.addAndGet(bytes);
        return true;
    }

    /**
     * A message the peer charged itself {@code bytes} for is dropped unread (its stream has ended here): a peer that
     * keeps the window gets them back.
     *
     * @throws ProtocolException when the peer that keeps the window went past it
     */
    public void dropped(int bytes) {
        if (!strict || bytes == 0) {
            return;
        }
        long after = outstanding.addAndGet(bytes);
        if (after > window) {
            throw new ProtocolException("MESSAGE of " + bytes + " window bytes exceeds the connection's flow-control window ("
                    + Math.max(0, window - (after - bytes)) + " of " + window + " left)");
        }
        credit(bytes);
    }

    /** Why {@link #charge} last refused a message (on the reading thread, after it did). */
    public String describeRefusal() {
        return refusedForShare
                ? "the server's memory budget is exhausted and this connection holds more than its share (" + held()
                        + " bytes of messages); retry later"
                : "the connection's messages would hold more than its " + window + "-byte window (" + held()
                        + " bytes held)";
    }

    /** Releases {@code bytes} charged earlier; to a peer that keeps the window, credit goes back once it is worth a frame. */
    public void release(long bytes) {
        if (bytes == 0) {
            return;
        }
        held.addAndGet(-bytes);
        if (!strict) {
            outstanding.addAndGet(-bytes);
            return;
        }
        credit(bytes);
    }

    /**
     * The peer that keeps the window is blocked: a message of its waits for more than it has left (a BLOCKED, on the
     * reading thread). What is owed goes back at once, or, when nothing is, with the next release. A peer sends at
     * most one BLOCKED per connection WINDOW it receives, plus one: returns false for a BLOCKED beyond that (the caller
     * charges it as a control frame).
     *
     * @throws ProtocolException when the peer does not keep the window (it has no business saying it is blocked)
     */
    public boolean peerBlocked() {
        if (!strict) {
            throw new ProtocolException("BLOCKED (a connection WINDOW of 0) from a peer that does not keep the connection"
                    + " window");
        }
        boolean expected = blockedAllowed.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        peerBlocked = true; // before the owed bytes are read: a release racing with this either sees it or is seen
        sendOwed();
        return expected;
    }

    /**
     * Owes the peer {@code bytes} (released or dropped); sends what is owed once it is worth a frame, or at once when the
     * peer said it is blocked.
     */
    private void credit(long bytes) {
        long o = owed.addAndGet(bytes);
        if (peerBlocked || o >= window / 2 || outstanding.get() > window / 2) { // rare frames, a sender never starved
            sendOwed();
        }
    }

    /** Sends what is owed, if anything. */
    private void sendOwed() {
        long take = owed.getAndSet(0);
        if (take == 0) {
            return;
        }
        peerBlocked = false;
        outstanding.addAndGet(-take);
        blockedAllowed.incrementAndGet();
        credits.accept((int) take);
    }
}
