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

        /**
         * A response message arrived with an attachment, which the listener now owns and must {@link Attachment#release()}.
         * The default hands the message to {@link #onMessage(Object)} and releases the attachment.
         */
        public void onMessage(T message, Attachment attachment) {
            try {
                onMessage(message);
            } finally {
                attachment.release();
            }
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

    /** Asks for up to n more response messages to be delivered to the listener; 0 is a no-op, a negative n is refused. */
    public abstract void request(int n);

    /** Cancels the call; the listener is closed with CANCELLED (with the message and cause). */
    public abstract void cancel(String message, Throwable cause);

    /** No more request messages will be sent. */
    public abstract void halfClose();

    /** Sends one request message. */
    public abstract void sendMessage(ReqT message);

    /**
     * Sends one request message with {@code attachment} beside it, read from the caller's memory without a copy where the
     * transport allows it. {@code onReleased} (may be null) runs exactly once when the call no longer references the
     * segment: after its bytes were handed to the network, or when the message is dropped (cancel, deadline, lost
     * connection). The caller keeps the segment open until then; a segment closed earlier fails the call. rdmarpc's calls
     * run {@code onReleased} on the shared callback executor ({@link CallExecutors#shared()}), under no lock of theirs.
     */
    public void sendMessage(ReqT message, java.lang.foreign.MemorySegment attachment, Runnable onReleased) {
        if (onReleased != null) {
            onReleased.run();
        }
        throw new UnsupportedOperationException(getClass().getName() + " does not send attachments");
    }

    /** True while the call can take a message without buffering past its flow-control window. */
    public boolean isReady() {
        return true;
    }
}
