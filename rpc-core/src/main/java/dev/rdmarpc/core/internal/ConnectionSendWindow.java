package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The send side of one connection, shared by its streams' {@link OutboundFlow}s: the peer's connection window (PROTOCOL.md
 * "Flow control"), from which each message takes its whole charge before its first frame goes out and which the peer's
 * connection WINDOW frames refill, and the bytes the connection's streams have queued, past {@link #QUEUE_LIMIT} of
 * which a sending thread waits (as it does past its own stream's limit). Thread-safe.
 */
final class ConnectionSendWindow {
    /** Bytes queued across a connection's streams past which a sending thread (not an I/O thread) waits. */
    static final long QUEUE_LIMIT = 8 << 20;

    private final AtomicLong queued = new AtomicLong();
    /** The peer's connection window, 0 while it advertised none (no limit). */
    private volatile int peerWindow;
    /** What is left of it; guarded by this. */
    private long left;

    /** The peer advertised a connection window of {@code window} bytes (0: none). Before any message is sent. */
    synchronized void peerWindow(int window) {
        this.peerWindow = window;
        this.left = window;
    }

    /** The peer's connection window, 0 when it has none. */
    int peerWindow() {
        return peerWindow;
    }

    /**
     * Takes the charge of a message costing {@code cost} bytes whose BEGIN frame carries {@code beginPayload}
     * ({@link FlowCapability#messageCharge}); false when the window has not that much left (the message waits for a
     * connection WINDOW). Always true when the peer has no connection window.
     */
    boolean tryTake(long cost, int beginPayload) {
        int window = peerWindow;
        if (window == 0) {
            return true;
        }
        int charge = FlowCapability.messageCharge(cost, beginPayload, window);
        synchronized (this) {
            if (left < charge) {
                return false;
            }
            left -= charge;
            return true;
        }
    }

    /**
     * The peer's connection WINDOW granted {@code increment} bytes. Not positive, or past 2^31-1 in all, is a protocol
     * error (as in HTTP/2).
     */
    synchronized void grant(int increment) {
        if (increment <= 0) {
            throw new ProtocolException("connection WINDOW grants " + increment + " bytes (must be positive)");
        }
        if (left + increment > Integer.MAX_VALUE) {
            throw new ProtocolException("connection WINDOW increment " + increment
                    + " takes the connection's send window past 2^31-1 (it was " + left + ")");
        }
        left += increment;
    }

    /** What is left of the peer's connection window (for tests); Long.MAX_VALUE when it has none. */
    synchronized long left() {
        return peerWindow == 0 ? Long.MAX_VALUE : left;
    }

    /** Adds {@code bytes} (negative: removes) to what the connection's streams have queued. */
    void addQueued(long bytes) {
        if (bytes != 0) {
            queued.addAndGet(bytes);
        }
    }

    /** Bytes the connection's streams have queued. */
    long queued() {
        return queued.get();
    }

    /** Whether a sender must wait before queueing {@code size} more bytes on the connection. */
    boolean mustWait(int size) {
        long q = queued.get();
        return q > 0 && q + size > QUEUE_LIMIT;
    }
}
