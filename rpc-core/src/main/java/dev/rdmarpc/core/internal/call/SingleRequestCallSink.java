package dev.rdmarpc.core.internal.call;

/**
 * What core's server stream tells the adapter of a single-request method (unary or server-streaming) of
 * {@code ServerCalls} straight, in place of a {@code ServerCall.Listener} object per call; see
 * {@link SingleRequestStarter}. Called as a listener would be: one at a time, in order, on the server's executor. For
 * rpc-core alone.
 */
public interface SingleRequestCallSink<ReqT> {
    /** A request message arrived. */
    void requestReceived(ReqT request);

    /** The client will send no more messages. */
    void requestsEnded();

    /** The call was cancelled. */
    void callCancelled();

    /** The call can take more messages without buffering past its flow-control window. */
    void callReady();
}
