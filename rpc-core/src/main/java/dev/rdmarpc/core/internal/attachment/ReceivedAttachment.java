package dev.rdmarpc.core.internal.attachment;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.buffer.SlabBuffer;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** An attachment received into a slab buffer: a read-only view of part of it, holding the buffer until released. */
final class ReceivedAttachment implements Attachment {
    private final SlabBuffer buffer;
    private final MemorySegment view;
    private final AtomicBoolean released = new AtomicBoolean();

    /** Takes ownership of {@code buffer}; the attachment is its bytes {@code [offset, offset+length)}. */
    ReceivedAttachment(SlabBuffer buffer, long offset, long length) {
        this.buffer = buffer;
        this.view = buffer.segment().asSlice(offset, length).asReadOnly();
    }

    @Override
    public MemorySegment segment() {
        if (released.get()) {
            throw new IllegalStateException("the attachment was released");
        }
        return view;
    }

    @Override
    public long size() {
        return view.byteSize();
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            buffer.release();
        }
    }

    @Override
    public boolean isReleased() {
        return released.get();
    }

    @Override
    public String toString() {
        return "Attachment{" + view.byteSize() + " bytes" + (released.get() ? ", released" : "") + "}";
    }
}
