package dev.rdmarpc.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Bytes that arrived beside a message, as a read-only view of the receiving side's buffer (no copy). The view stays
 * valid until {@link #release()}; whoever receives an attachment owns it and must release it (or keep a copy with
 * {@link #copyTo(Arena)} and release the view). Releasing more than once does nothing; reading the view after the
 * release reads memory that may already hold other data.
 */
public interface Attachment {

    /**
     * An attachment to send: the caller's {@code segment} (native memory is sent without a copy where the transport
     * allows it), and {@code onReleased} (may be null), run exactly once when the call releases it, that is when
     * nothing references the segment any more (on the shared callback executor, {@link CallExecutors#shared()}, under no
     * lock of rdmarpc's). The caller keeps the segment open until then.
     */
    static Attachment of(MemorySegment segment, Runnable onReleased) {
        return new LocalAttachment(segment, onReleased);
    }

    /**
     * Drops the registrations transports keep cached for native memory overlapping {@code memory}: the RDMA transport
     * keeps the pages of attachments sent from the caller's memory registered with the device for reuse (until the
     * memory's arena closes, or the cache's bounds evict them). Call it before memory that was sent is unmapped or
     * reused by other means than closing its arena (e.g. a mapping released outside Java, or a file whose contents a
     * later send must not see from an old registration); memory of a closed arena is dropped without it.
     *
     * @return how many of the dropped registrations sends in flight still hold: each is released as soon as its send
     * releases the attachment ({@code onReleased}), and the memory must stay mapped until then
     */
    static int invalidateRegistrations(MemorySegment memory) {
        java.util.Objects.requireNonNull(memory, "memory");
        int held = 0;
        for (dev.rdmarpc.core.spi.ConnectionUpgrader u
                : java.util.ServiceLoader.load(dev.rdmarpc.core.spi.ConnectionUpgrader.class, Attachment.class.getClassLoader())) {
            held += u.invalidateRegistrations(memory);
        }
        return held;
    }

    /** The attachment's bytes, read-only; valid until {@link #release()}. */
    MemorySegment segment();

    /** Size of the attachment in bytes. */
    default long size() {
        return segment().byteSize();
    }

    /** Gives the receiving buffer back; idempotent. */
    void release();

    /** Whether {@link #release()} has been called. */
    boolean isReleased();

    /** A copy of the bytes in memory of {@code arena}, which outlives the release of this attachment. */
    default MemorySegment copyTo(Arena arena) {
        MemorySegment copy = arena.allocate(Math.max(1, size()), 8).asSlice(0, size());
        copy.copyFrom(segment());
        return copy;
    }

    /** A copy of the bytes on the heap. */
    default byte[] toByteArray() {
        return segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }
}
