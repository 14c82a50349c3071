package dev.rdmarpc.core;

import java.util.Objects;

/** The outcome of a call: a code from grpc's code set, an optional description and, client side, a cause. */
public final class Status {

    /** grpc's status codes, with the same numbers and meanings. */
    public enum Code {
        OK(0), CANCELLED(1), UNKNOWN(2), INVALID_ARGUMENT(3), DEADLINE_EXCEEDED(4), NOT_FOUND(5),
        ALREADY_EXISTS(6), PERMISSION_DENIED(7), RESOURCE_EXHAUSTED(8), FAILED_PRECONDITION(9),
        ABORTED(10), OUT_OF_RANGE(11), UNIMPLEMENTED(12), INTERNAL(13), UNAVAILABLE(14),
        DATA_LOSS(15), UNAUTHENTICATED(16);

        private static final Code[] BY_VALUE = values();
        private final int value;

        Code(int value) {
            this.value = value;
        }

        /** The code's number on the wire. */
        public int value() {
            return value;
        }

        /** The status with this code and no description. */
        public Status toStatus() {
            return Status.BY_CODE[ordinal()];
        }

        /** The code for a wire number; unknown numbers map to UNKNOWN, as grpc does. */
        public static Code fromValue(int value) {
            return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : UNKNOWN;
        }
    }

    // Built here, not in Code's constructor: either class may then initialise first without seeing a null constant.
    private static final Status[] BY_CODE = byCode();

    public static final Status OK = Code.OK.toStatus();
    public static final Status CANCELLED = Code.CANCELLED.toStatus();
    public static final Status UNKNOWN = Code.UNKNOWN.toStatus();
    public static final Status INVALID_ARGUMENT = Code.INVALID_ARGUMENT.toStatus();
    public static final Status DEADLINE_EXCEEDED = Code.DEADLINE_EXCEEDED.toStatus();
    public static final Status NOT_FOUND = Code.NOT_FOUND.toStatus();
    public static final Status ALREADY_EXISTS = Code.ALREADY_EXISTS.toStatus();
    public static final Status PERMISSION_DENIED = Code.PERMISSION_DENIED.toStatus();
    public static final Status RESOURCE_EXHAUSTED = Code.RESOURCE_EXHAUSTED.toStatus();
    public static final Status FAILED_PRECONDITION = Code.FAILED_PRECONDITION.toStatus();
    public static final Status ABORTED = Code.ABORTED.toStatus();
    public static final Status OUT_OF_RANGE = Code.OUT_OF_RANGE.toStatus();
    public static final Status UNIMPLEMENTED = Code.UNIMPLEMENTED.toStatus();
    public static final Status INTERNAL = Code.INTERNAL.toStatus();
    public static final Status UNAVAILABLE = Code.UNAVAILABLE.toStatus();
    public static final Status DATA_LOSS = Code.DATA_LOSS.toStatus();
    public static final Status UNAUTHENTICATED = Code.UNAUTHENTICATED.toStatus();

    private final Code code;
    private final String description;
    private final Throwable cause;

    private Status(Code code, String description, Throwable cause) {
        this.code = code;
        this.description = description;
        this.cause = cause;
    }

    private static Status[] byCode() {
        Code[] codes = Code.values();
        Status[] statuses = new Status[codes.length];
        for (Code c : codes) {
            statuses[c.ordinal()] = new Status(c, null, null);
        }
        return statuses;
    }

    /** The status for a wire code number. */
    public static Status fromCodeValue(int value) {
        return Code.fromValue(value).toStatus();
    }

    /** Maps a throwable to a status: a {@link StatusException}'s own, otherwise UNKNOWN with the throwable as cause. */
    public static Status fromThrowable(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StatusException se) {
                return se.getStatus();
            }
        }
        return UNKNOWN.withCause(t);
    }

    public Code getCode() {
        return code;
    }

    /** The description, or null. */
    public String getDescription() {
        return description;
    }

    /** The cause (client side only; never sent on the wire), or null. */
    public Throwable getCause() {
        return cause;
    }

    public boolean isOk() {
        return code == Code.OK;
    }

    public Status withDescription(String newDescription) {
        return Objects.equals(newDescription, description) ? this : new Status(code, newDescription, cause);
    }

    /** Appends to the description, separated by a newline, as grpc does. */
    public Status augmentDescription(String more) {
        if (more == null) {
            return this;
        }
        return withDescription(description == null ? more : description + "\n" + more);
    }

    public Status withCause(Throwable newCause) {
        return newCause == cause ? this : new Status(code, description, newCause);
    }

    /** An exception carrying this status. */
    public StatusException asException() {
        return new StatusException(this, null);
    }

    /** An exception carrying this status and trailers. */
    public StatusException asException(Metadata trailers) {
        return new StatusException(this, trailers);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Status{code=").append(code);
        if (description != null) {
            sb.append(", description=").append(description);
        }
        if (cause != null) {
            sb.append(", cause=").append(cause);
        }
        return sb.append('}').toString();
    }
}
