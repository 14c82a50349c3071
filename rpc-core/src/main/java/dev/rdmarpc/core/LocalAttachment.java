package dev.rdmarpc.core;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** The attachment a sender hands to {@link WithAttachment}: its own segment, and what runs when the call releases it. */
final class LocalAttachment implements Attachment {
    private final MemorySegment segment;
    private final Runnable onReleased;
    private final AtomicBoolean released = new AtomicBoolean();

    LocalAttachment(MemorySegment segment, Runnable onReleased) {
        this.segment = java.util.Objects.requireNonNull(segment, "segment");
        this.onReleased = onReleased;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true) && onReleased != null) {
            onReleased.run();
        }
    }

    @Override
    public boolean isReleased() {
        return released.get();
    }

    @Override
    public String toString() {
        return "Attachment{" + segment.byteSize() + " bytes to send" + (released.get() ? ", released" : "") + "}";
    }
}
