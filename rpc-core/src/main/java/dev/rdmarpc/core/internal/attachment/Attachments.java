package dev.rdmarpc.core.internal.attachment;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.call.MessageFramer;

/** What both stream sides do with attachments: frame one, drop an unsent one, describe refusals, hand a received one over. */
public final class Attachments {
    /** The status of a call whose attachment segment its owner closed while the call was still sending it. */
    public static final Status CLOSED_WHILE_SENDING = Status.FAILED_PRECONDITION.withDescription(
            "the attachment's memory segment was closed by its owner while the call was sending it");

    private Attachments() {
    }

    /** Frees a framed message that will not be sent and lets its attachment (may be null) go. */
    public static void drop(SlabBuffer framed, OutgoingAttachment attachment) {
        framed.release();
        if (attachment != null) {
            attachment.release();
        }
    }

    /** Frames {@code message} to be followed by {@code attachment}; lets the attachment go if framing fails. */
    public static <T> SlabBuffer frame(SlabPool pool, Marshaller<T> marshaller, T message, OutgoingAttachment attachment) {
        try {
            return MessageFramer.frameWithAttachment(pool, marshaller, message, attachment.size());
        } catch (RuntimeException | Error e) {
            attachment.release();
            throw e;
        }
    }

    /** The description of a refused attachment. */
    public static String tooLarge(String side, long size, int max) {
        return side + " attachment of " + size + " bytes exceeds the maximum inbound attachment size " + max
                + " (none of its bytes were read)";
    }

    /** Why a request of {@code method} with an attachment of {@code size} bytes was refused, the method's limit being {@code max}. */
    public static String refused(String method, long size, int max) {
        if (max >= 0) {
            return tooLarge("request", size, max);
        }
        return "request attachment of " + size + " bytes refused: " + method + " accepts no attachments (a server accepts"
                + " them only on the methods or services that enable them, or on all with maxInboundAttachmentSize;"
                + " none of its bytes were read)";
    }

    /**
     * The attachment of a received message: {@code apart} when it was kept in a buffer of its own (then owned by the
     * attachment), else the bytes of {@code buffer} after {@code split} (then the attachment owns the buffer).
     */
    public static Attachment received(SlabBuffer buffer, int split, SlabBuffer apart) {
        if (apart != null) {
            return new ReceivedAttachment(apart, 0, apart.length());
        }
        return new ReceivedAttachment(buffer, split, buffer.length() - (long) split);
    }

    /**
     * Parses the message part of {@code buffer}. When the attachment lies {@code apart}, the buffer holds only the
     * message and is released here; on failure {@code attachment} is released too.
     */
    public static <T> T parse(Marshaller<T> marshaller, SlabBuffer buffer, int split, boolean compressed, Attachment attachment,
                              SlabBuffer apart) {
        try {
            return marshaller.parse(buffer.segment(), 0, split, compressed);
        } catch (RuntimeException | Error e) {
            attachment.release();
            throw e;
        } finally {
            if (apart != null) {
                buffer.release();
            }
        }
    }
}
