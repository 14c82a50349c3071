package dev.rdmarpc.core;

/**
 * A message and the attachment beside it (null when it has none), for the observer-style API: a call adapted by
 * {@link AttachmentCalls} sends and receives these. Whoever holds a received one owns its attachment and releases it; a
 * sent one's attachment is released by the call once it no longer references the memory.
 *
 * @param message    the message
 * @param attachment its attachment, or null
 */
public record WithAttachment<T>(T message, Attachment attachment) {

    /** A message without an attachment. */
    public static <T> WithAttachment<T> of(T message) {
        return new WithAttachment<>(message, null);
    }

    /** A message with {@code segment} beside it; {@code onReleased} (may be null) runs once the call released it. */
    public static <T> WithAttachment<T> of(T message, java.lang.foreign.MemorySegment segment, Runnable onReleased) {
        return new WithAttachment<>(message, Attachment.of(segment, onReleased));
    }

    /** Releases the attachment, if any. */
    public void release() {
        if (attachment != null) {
            attachment.release();
        }
    }
}
