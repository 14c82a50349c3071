package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;

/** How a unary call ends for its observer: the one response then completion, or an error with its own trailers. For rpc-core alone. */
public final class UnaryObserverClose {
    /** Why a unary call is cancelled when the server sends a second response. */
    public static final String SECOND_RESPONSE = "server sent more than one response to a unary call";

    private UnaryObserverClose() {
    }

    /**
     * Ends a unary call with {@code status} for {@code observer}: {@code value} (null when none came) then completion,
     * or an error; {@code trailers} may be null for none (see {@link NullForEmptyMetadata}), the observer then gets
     * an instance of its own.
     */
    public static <RespT> void close(StreamObserver<RespT> observer, Status status, Metadata trailers, RespT value) {
        if (status.isOk() && value != null) {
            observer.onNext(value);
            observer.onCompleted();
            return;
        }
        Metadata t = trailers != null ? trailers : new Metadata();
        if (!status.isOk()) {
            observer.onError(status.asException(t));
        } else {
            observer.onError(Status.INTERNAL.withDescription("server closed the unary call with OK but sent no response").asException(t));
        }
    }
}
