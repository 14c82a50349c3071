package dev.rdmarpc.core.internal.attachment;

import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.exec.RpcExecutors;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A message's attachment on its way out: the sender's memory segment, sent without a copy where the transport can, and
 * the callback that tells the sender when nothing references the segment any more. The stream holds one reference
 * until it has handed every byte to the transport (or dropped the message); each chunk handed to the transport holds
 * one until it is written or dropped. The callback runs once, when the last reference goes, on core's shared callback
 * executor: the last reference is often dropped under a lock (the stream's, while it sends or ends; a transport's, when
 * the peer is done with a chunk), and the callback is application code, which never runs under a lock of rdmarpc's.
 */
public final class OutgoingAttachment {
    private final MemorySegment segment;
    private final Runnable onReleased;
    private final AtomicInteger refs = new AtomicInteger(1);
    /** Bytes handed to the transport so far; guarded by the owning stream's lock. */
    public long sent;

    OutgoingAttachment(MemorySegment segment, Runnable onReleased) {
        this.segment = segment;
        this.onReleased = onReleased;
    }

    /**
     * The attachment, or null when there is none (then the callback runs at once: the sender's thread holds no lock of
     * ours yet); throws (and releases it) when the segment cannot be sent.
     */
    public static OutgoingAttachment of(MemorySegment segment, Runnable onReleased) {
        if (segment == null) {
            if (onReleased != null) {
                onReleased.run();
            }
            return null;
        }
        OutgoingAttachment a = new OutgoingAttachment(segment, onReleased);
        if (segment.byteSize() > Integer.MAX_VALUE || !segment.scope().isAlive()) {
            a.release();
            throw new IllegalArgumentException(segment.scope().isAlive()
                    ? "attachment of " + segment.byteSize() + " bytes is larger than 2^31-1 bytes"
                    : "the attachment's memory segment is already closed");
        }
        return a;
    }

    public MemorySegment segment() {
        return segment;
    }

    /** Size in bytes. */
    public int size() {
        return (int) segment.byteSize();
    }

    /** Bytes not yet handed to the transport. */
    public int remaining() {
        return (int) (segment.byteSize() - sent);
    }

    /** Whether the owner has not closed the segment's memory. */
    public boolean isAlive() {
        return segment.scope().isAlive();
    }

    /** A reference for one chunk handed to the transport; release it with {@link #release()}. */
    public OutgoingAttachment retain() {
        refs.incrementAndGet();
        return this;
    }

    /**
     * Drops one reference; the last one hands the sender's callback to core's shared callback executor, which runs it
     * after the caller's locks are released (the caller may hold any of them).
     */
    public void release() {
        int left = refs.decrementAndGet();
        if (left == 0 && onReleased != null) {
            RpcExecutors.sharedCallbacks().execute(this::notifyReleased);
        } else if (left < 0) {
            throw new IllegalStateException("attachment released more often than retained");
        }
    }

    private void notifyReleased() {
        try {
            onReleased.run();
        } catch (RuntimeException e) {
            Connection.LOG.log(System.Logger.Level.WARNING, "an attachment's release callback threw", e);
        }
    }

    /** A {@link Runnable} releasing one reference (for a transport's completion of a chunk). */
    public Runnable releaser() {
        return this::release;
    }
}
