package dev.rdmarpc.core.internal.flow;

import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The send side of one connection, shared by its streams' {@code OutboundFlow}s: the peer's connection window (PROTOCOL.md
 * "Flow control"), from which each message takes its whole charge before its first frame goes out and which the peer's
 * connection WINDOW frames refill; the bytes the connection's streams have queued, past a limit of which
 * ({@link #QUEUE_LIMIT} on a server) a sending thread waits (as it does past its own stream's limit); and the bytes of messages already begun
 * handed to the transport while it was not writable, at most {@link #OVERFLOW_LIMIT} until it drains. Thread-safe.
 */
public final class ConnectionSendWindow {
    /** Bytes queued across a server connection's streams past which a sending thread (not an I/O thread) waits. */
    public static final long QUEUE_LIMIT = 6 << 20;

    /**
     * Bytes of begun messages the connection's streams may hand to a transport that is not writable (past its
     * high-water mark) before they wait for it to drain: a large message goes on in long bursts, and a peer that does
     * not read holds at most this much beyond the mark.
     */
    static final long OVERFLOW_LIMIT = 2 << 20;

    private final long queueLimit;
    private final AtomicLong queued = new AtomicLong();
    /** Room taken by responses being serialized, not yet queued ({@link #tryReserve}). */
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong overflow = new AtomicLong();
    /** The peer's connection window, 0 while it advertised none (no limit). */
    private volatile int peerWindow;
    /** What is left of it; guarded by this. */
    private long left;
    /** Whether a BLOCKED went to the peer since its last connection WINDOW; guarded by this. */
    private boolean blockedSignalled;
    /** Sends the peer a BLOCKED (a connection WINDOW of 0); set once, before any message is sent. */
    private Runnable signalBlocked = () -> { };

    /**
     * With sending threads waiting past {@code queueLimit} bytes queued across the connection's streams
     * ({@code Long.MAX_VALUE}: no limit, each stream keeps its own).
     */
    public ConnectionSendWindow(long queueLimit) {
        this.queueLimit = queueLimit;
    }

    /** The peer advertised a connection window of {@code window} bytes (0: none). Before any message is sent. */
    public synchronized void peerWindow(int window) {
        this.peerWindow = window;
        this.left = window;
    }

    /**
     * {@code signal} sends the peer a BLOCKED: a message waits for more of the peer's connection window than is left.
     * It is run at most once between two of the peer's connection WINDOWs, by a thread that found too little left.
     */
    public void onBlocked(Runnable signal) {
        this.signalBlocked = signal;
    }

    /** The peer's connection window, 0 when it has none. */
    int peerWindow() {
        return peerWindow;
    }

    /**
     * Takes the charge of a message costing {@code cost} bytes whose BEGIN frame carries {@code beginPayload}
     * ({@link FlowCapability#messageCharge}); false when the window has not that much left (the message waits for a
     * connection WINDOW, and the peer is told once that this side is blocked, so that it returns the credit it holds
     * back). Always true when the peer has no connection window.
     */
    public boolean tryTake(long cost, int beginPayload) {
        int window = peerWindow;
        if (window == 0) {
            return true;
        }
        int charge = FlowCapability.messageCharge(cost, beginPayload, window);
        synchronized (this) {
            if (left >= charge) {
                left -= charge;
                return true;
            }
            if (blockedSignalled) {
                return false;
            }
            blockedSignalled = true;
        }
        signalBlocked.run();
        return false;
    }

    /**
     * The peer's connection WINDOW granted {@code increment} bytes. Not positive, or past 2^31-1 in all, is a protocol
     * error (as in HTTP/2).
     */
    public synchronized void grant(int increment) {
        if (increment <= 0) {
            throw new ProtocolException("connection WINDOW grants " + increment + " bytes (must be positive)");
        }
        if (left + increment > Integer.MAX_VALUE) {
            throw new ProtocolException("connection WINDOW increment " + increment
                    + " takes the connection's send window past 2^31-1 (it was " + left + ")");
        }
        left += increment;
        blockedSignalled = false;
    }

    /** What is left of the peer's connection window (for tests); Long.MAX_VALUE when it has none. */
    synchronized long left() {
        return peerWindow == 0 ? Long.MAX_VALUE : left;
    }

    /**
     * A stream would hand {@code bytes} of a begun message to a transport that is not writable: false (it waits for
     * the transport to drain) once {@link #OVERFLOW_LIMIT} has been handed since the transport was last writable.
     */
    public boolean tryOverflow(int bytes) {
        if (overflow.addAndGet(bytes) <= OVERFLOW_LIMIT) {
            return true;
        }
        overflow.addAndGet(-bytes);
        return false;
    }

    /** The transport drained below its low-water mark: what was handed to it beyond the mark has gone. */
    public void drained() {
        overflow.set(0);
    }

    /** Adds {@code bytes} (negative: removes) to what the connection's streams have queued. */
    public void addQueued(long bytes) {
        if (bytes != 0) {
            queued.addAndGet(bytes);
        }
    }

    /** Bytes the connection's streams have queued. */
    public long queued() {
        return queued.get();
    }

    /** Whether a sender must wait before queueing {@code size} more bytes on the connection. */
    public boolean mustWait(int size) {
        long q = queued.get() + reserved.get();
        return q > 0 && q + size > queueLimit;
    }

    /**
     * Takes room for a message of {@code size} bytes about to be serialized and queued, unless the connection must
     * wait ({@link #mustWait}); false then. Atomic, so senders checking at the same moment cannot all pass: the queue
     * holds at most its limit, or one message when it was empty. The taker calls {@link #unreserve} once the message
     * is queued (or was not sent).
     */
    public boolean tryReserve(int size) {
        while (true) {
            long r = reserved.get();
            long q = queued.get() + r;
            if (q > 0 && q + size > queueLimit) {
                return false;
            }
            if (reserved.compareAndSet(r, r + size)) {
                return true;
            }
        }
    }

    /** Gives back room taken by {@link #tryReserve}, after the message was queued (its bytes now count as queued). */
    public void unreserve(int size) {
        reserved.addAndGet(-size);
    }
}
