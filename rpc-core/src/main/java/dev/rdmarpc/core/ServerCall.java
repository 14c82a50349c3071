package dev.rdmarpc.core;

/** The low-level server side of one call, as in grpc-java; {@link ServerCalls} adapts it to observers. */
public abstract class ServerCall<ReqT, RespT> {

    /** Callbacks for one call; invoked serially on the server's executor. */
    public abstract static class Listener<T> {
        /** A request message arrived (only after {@link ServerCall#request}). */
        public void onMessage(T message) {
        }

        /**
         * A request message arrived with an attachment, which the listener now owns and must {@link Attachment#release()}.
         * The default hands the message to {@link #onMessage(Object)} and releases the attachment.
         */
        public void onMessage(T message, Attachment attachment) {
            try {
                onMessage(message);
            } finally {
                attachment.release();
            }
        }

        /** The client will send no more messages. */
        public void onHalfClose() {
        }

        /** The call was cancelled: by the client, its deadline, or the server shutting down. */
        public void onCancel() {
        }

        /** The call ended normally after {@link ServerCall#close}. */
        public void onComplete() {
        }

        /** The call can take more messages without buffering past its flow-control window. */
        public void onReady() {
        }
    }

    /** Asks for up to n more request messages; 0 is a no-op, a negative n is refused. */
    public abstract void request(int n);

    /** Sends response headers; optional, at most once, before any message. */
    public abstract void sendHeaders(Metadata headers);

    /**
     * Sends one response message. When the peer's window is used up and this call's outbound
     * buffer is full, blocks the calling thread (unless it is a transport I/O thread) until the
     * peer reads, so that a fast sender's buffered bytes stay bounded.
     */
    public abstract void sendMessage(RespT message);

    /**
     * Compresses the response messages with {@code compressor} ("gzip"; null or "identity" for none) when the client
     * accepts it ({@code grpc-accept-encoding}), else sends them as they are; as grpc-java's. Call it before
     * {@link #sendHeaders}, which then name the encoding. The default does nothing.
     */
    public void setCompression(String compressor) {
    }

    /**
     * Sends one response message with {@code attachment} beside it, read from the caller's memory without a copy where the
     * transport allows it. {@code onReleased} (may be null) runs exactly once when the call no longer references the
     * segment: after its bytes were handed to the network, or when the message is dropped (cancel, deadline, lost
     * connection). The caller keeps the segment open until then; a segment closed earlier fails the call. rdmarpc's calls
     * run {@code onReleased} on the shared callback executor ({@link CallExecutors#shared()}), under no lock of theirs.
     * A null {@code attachment} sends a plain message (and runs {@code onReleased}, if any, at once).
     */
    public void sendMessage(RespT message, java.lang.foreign.MemorySegment attachment, Runnable onReleased) {
        if (onReleased != null) {
            onReleased.run();
        }
        throw new UnsupportedOperationException(getClass().getName() + " does not send attachments");
    }

    /** Ends the call with a status and trailers. */
    public abstract void close(Status status, Metadata trailers);

    public abstract boolean isCancelled();

    /** True while a message can be sent without buffering past the flow-control window. */
    public boolean isReady() {
        return true;
    }

    /** The call's deadline as the client sent it, or null. */
    public abstract Deadline getDeadline();

    public abstract MethodDescriptor<ReqT, RespT> getMethodDescriptor();

    /** The remote address, as text, for logs. */
    public abstract String getPeer();

    /** The authority ("host:port") the client dialled, as sent in its HEADERS. */
    public String getAuthority() {
        return null;
    }

    /** The transport carrying the call: "tcp" or "rdma". */
    public String getTransportName() {
        return null;
    }

    /** The client connection the call arrived on (the same object a {@link PeerConnectionListener} was given). */
    public PeerConnection getConnection() {
        return null;
    }

    /**
     * The services of the server the call arrived at, as added to its builder (server reflection lists them); empty
     * for a call not served by an {@link RpcServer}.
     */
    public java.util.List<ServiceDefinition> getServerServices() {
        return java.util.List.of();
    }

    /**
     * The TLS session the call arrived on, or null without TLS; its peer certificates are the client's verified
     * identity (also on {@link #getConnection()}: {@link PeerConnection#peerPrincipal()}).
     */
    public javax.net.ssl.SSLSession getSslSession() {
        PeerConnection c = getConnection();
        return c == null ? null : c.sslSession();
    }
}
