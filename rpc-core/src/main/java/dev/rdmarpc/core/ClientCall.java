package dev.rdmarpc.core;

/**
 * The low-level client side of one call, as in grpc-java. Stubs drive it; applications rarely
 * do. Methods other than {@link #cancel} must be called from one thread at a time.
 */
public abstract class ClientCall<ReqT, RespT> {

    /** Callbacks for one call; invoked serially on the call's executor. */
    public abstract static class Listener<T> {
        /** The server's response headers arrived. */
        public void onHeaders(Metadata headers) {
        }

        /** A response message arrived (only after {@link ClientCall#request}). */
        public void onMessage(T message) {
        }

        /** The call finished; nothing follows. */
        public void onClose(Status status, Metadata trailers) {
        }

        /** The call can take more messages without buffering past its flow-control window. */
        public void onReady() {
        }
    }

    /** Starts the call: sends the request headers. */
    public abstract void start(Listener<RespT> listener, Metadata headers);

    /** Asks for up to n more response messages to be delivered to the listener. */
    public abstract void request(int n);

    /** Cancels the call; the listener is closed with CANCELLED (with the message and cause). */
    public abstract void cancel(String message, Throwable cause);

    /** No more request messages will be sent. */
    public abstract void halfClose();

    /** Sends one request message. */
    public abstract void sendMessage(ReqT message);

    /** True while the call can take a message without buffering past its flow-control window. */
    public boolean isReady() {
        return true;
    }
}
