package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.flow.ConnectionWindow;

/**
 * Recycles the per-call halves of a stream's flow control ({@link InboundMessages}, {@link OutboundFlow}) between the
 * calls of one channel or one server connection, so that a call in steady state allocates neither. A stream takes
 * its parts when it is created and gives each back once, under its own lock, at the point after which it never
 * touches that part again (it clears its field first, so no stale reference to a recycled part remains). A given-back
 * reassembler's buffers are freed; a send side still holding work (queued frames, a waiting sender) and a part given
 * back twice are refused rather than shared. Bounded: past {@link #CAPACITY}
 * parts of a kind, a given-back part is left to the garbage collector. Thread-safe.
 */
public final class StreamParts {
    /** Parts of each kind kept at most. */
    static final int CAPACITY = 32;

    private final SlabPool pool;
    private final int maxMessageSize;
    private final int maxAttachmentBytes;
    private final int initialWindow;
    /** The connection's window its streams' messages are charged to, or null for none. */
    private final ConnectionWindow connectionWindow;
    private final InboundMessages[] inbound = new InboundMessages[CAPACITY];
    private final OutboundFlow[] outbound = new OutboundFlow[CAPACITY];
    private int inboundCount;
    private int outboundCount;

    public StreamParts(SlabPool pool, int maxMessageSize, int maxAttachmentBytes, int initialWindow) {
        this(pool, maxMessageSize, maxAttachmentBytes, initialWindow, null);
    }

    /** Parts whose messages are charged to {@code connectionWindow} (null: none). */
    public StreamParts(SlabPool pool, int maxMessageSize, int maxAttachmentBytes, int initialWindow,
                       ConnectionWindow connectionWindow) {
        this.connectionWindow = connectionWindow;
        this.pool = pool;
        this.maxMessageSize = maxMessageSize;
        this.maxAttachmentBytes = maxAttachmentBytes;
        this.initialWindow = initialWindow;
    }

    /** A reassembler for a new stream: a recycled one, reset, or a new one. */
    InboundMessages takeInbound() {
        synchronized (this) {
            if (inboundCount > 0) {
                InboundMessages m = inbound[--inboundCount];
                inbound[inboundCount] = null;
                return m;
            }
        }
        return new InboundMessages(pool, maxMessageSize, maxAttachmentBytes, initialWindow, connectionWindow);
    }

    /** A send side for a new stream: a recycled one, unbound, or a new one. */
    OutboundFlow takeOutbound() {
        synchronized (this) {
            if (outboundCount > 0) {
                OutboundFlow f = outbound[--outboundCount];
                outbound[outboundCount] = null;
                return f;
            }
        }
        return new OutboundFlow(pool);
    }

    /** Frees what {@code m} holds and keeps it for the next stream; its stream must not use it again. */
    void recycle(InboundMessages m) {
        m.reset();
        synchronized (this) {
            if (inboundCount == CAPACITY || contains(inbound, inboundCount, m)) {
                return;
            }
            inbound[inboundCount++] = m;
        }
    }

    /** Keeps an idle {@code f} for the next stream (one still queueing or with a waiting sender is dropped). */
    void recycle(OutboundFlow f) {
        if (!f.isIdle()) {
            return;
        }
        f.reset();
        synchronized (this) {
            if (outboundCount == CAPACITY || contains(outbound, outboundCount, f)) {
                return;
            }
            outbound[outboundCount++] = f;
        }
    }

    /** Parts of each kind waiting for a stream (for tests). */
    synchronized int idleInbound() {
        return inboundCount;
    }

    /** Send sides waiting for a stream (for tests). */
    synchronized int idleOutbound() {
        return outboundCount;
    }

    private static boolean contains(Object[] parts, int count, Object part) {
        for (int i = 0; i < count; i++) {
            if (parts[i] == part) {
                return true;
            }
        }
        return false;
    }
}
