package dev.rdmarpc.core;

/** The request side of a client call, which the client can also cancel. */
public abstract class ClientCallStreamObserver<ReqT> extends CallStreamObserver<ReqT> {
    /** Cancels the call; the response observer gets CANCELLED. */
    public abstract void cancel(String message, Throwable cause);
}
