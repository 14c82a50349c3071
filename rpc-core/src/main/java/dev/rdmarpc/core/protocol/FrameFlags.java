package dev.rdmarpc.core.protocol;

/** Flag bits of the frame header, per frame type (see docs/PROTOCOL.md). */
public final class FrameFlags {
    /** MESSAGE: first frame of a message; the payload starts with the message's total length (u32). */
    public static final int BEGIN = 0x01;
    /** MESSAGE: last frame of a message. */
    public static final int END = 0x02;
    /**
     * MESSAGE, BEGIN frame only: the message bytes are compressed. Core compresses nothing itself: the encoding is
     * agreed in the call's metadata (grpc-compat uses grpc's {@code grpc-encoding}) and the marshaller sets and reads
     * the flag ({@code Marshaller.isCompressed}, {@code Marshaller.parse(…, compressed)}).
     */
    public static final int COMPRESSED = 0x04;
    /** HEADERS or MESSAGE from the client: the client sends nothing more (half close). */
    public static final int END_STREAM = 0x08;
    /**
     * MESSAGE, BEGIN frame only: an attachment follows the message. The BEGIN payload then starts with the message's
     * length (u32) and the attachment's length (u32); the frames of the message carry the message's bytes followed by
     * the attachment's, and END marks the last byte of the attachment.
     */
    public static final int ATTACHMENT = 0x10;
    /** PING: this is the answer to a PING. */
    public static final int ACK = 0x01;

    /** Flags a MESSAGE frame may carry. */
    public static final int MESSAGE_MASK = BEGIN | END | COMPRESSED | END_STREAM | ATTACHMENT;
    /** Flags a HEADERS frame may carry. */
    public static final int HEADERS_MASK = END_STREAM;

    private FrameFlags() {
    }

    /** The flags a frame type may carry; anything else is a protocol violation. */
    public static int allowed(int type) {
        return switch (type) {
            case FrameType.MESSAGE -> MESSAGE_MASK;
            case FrameType.HEADERS -> HEADERS_MASK;
            case FrameType.PING -> ACK;
            default -> 0;
        };
    }
}
