package dev.rdmarpc.core.protocol;

/** A peer broke the wire protocol; the connection it came on is closed with this message as the reason. */
public final class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message, null, false, false);
    }
}
