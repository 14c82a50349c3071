package dev.rdmarpc.core.protocol;

/**
 * A frame this side was about to encode would carry more payload than the peer accepts (its HELLO's max frame
 * payload); nothing was sent.
 */
public final class FrameTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int payloadSize;
    private final int maxPayload;

    /** {@code what} names the frame in the message, e.g. "request HEADERS". */
    public FrameTooLargeException(String what, int payloadSize, int maxPayload) {
        super(what + " of " + payloadSize + " bytes exceed the peer's max frame size " + maxPayload, null, false, false);
        this.payloadSize = payloadSize;
        this.maxPayload = maxPayload;
    }

    /** Payload bytes the frame would have had. */
    public int payloadSize() {
        return payloadSize;
    }

    /** The largest payload the peer accepts. */
    public int maxPayload() {
        return maxPayload;
    }
}
