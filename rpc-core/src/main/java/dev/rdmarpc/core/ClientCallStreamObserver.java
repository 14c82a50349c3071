package dev.rdmarpc.core;

/** The request side of a client call, which the client can also cancel and use to pace the responses. */
public abstract class ClientCallStreamObserver<ReqT> extends CallStreamObserver<ReqT> {
    /** Cancels the call; the response observer gets CANCELLED. */
    public abstract void cancel(String message, Throwable cause);

    /**
     * Swaps to manual flow control: no response reaches the observer unless {@link #request}ed, and {@code request}
     * responses are asked for as the call starts (0 for none). Call it in {@link ClientResponseObserver#beforeStart};
     * {@link #disableAutoInboundFlowControl()} is the same with one initial request, as in grpc-java.
     */
    public abstract void disableAutoRequestWithInitial(int request);
}
