package dev.rdmarpc.core;

/** An unchecked exception carrying a call's {@link Status} and, when the peer sent any, its trailers. */
public class StatusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Status status;
    private final transient Metadata trailers;

    public StatusException(Status status) {
        this(status, null);
    }

    public StatusException(Status status, Metadata trailers) {
        super(message(status), status.getCause(), true, true);
        this.status = status;
        this.trailers = trailers;
    }

    private static String message(Status status) {
        return status.getDescription() == null
                ? status.getCode().name()
                : status.getCode() + ": " + status.getDescription();
    }

    public Status getStatus() {
        return status;
    }

    /** The trailers that came with the status, or null. */
    public Metadata getTrailers() {
        return trailers;
    }
}
