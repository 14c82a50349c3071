package dev.rdmarpc.core;

/**
 * A method paired with the handler that serves it, and the attachments it accepts with a request message.
 *
 * @param maxAttachmentBytes attachment bytes a request of this method may carry, or {@link #SERVER_ATTACHMENT_LIMIT}
 *                           for the server's own setting ({@code RpcServer.Builder.maxInboundAttachmentSize}, none by
 *                           default)
 */
public record ServerMethodDefinition<ReqT, RespT>(MethodDescriptor<ReqT, RespT> method,
                                                  ServerCallHandler<ReqT, RespT> handler, int maxAttachmentBytes) {
    /** {@link #maxAttachmentBytes} of a method that takes the server's setting. */
    public static final int SERVER_ATTACHMENT_LIMIT = -1;

    /** Checks the limit. */
    public ServerMethodDefinition {
        if (maxAttachmentBytes < SERVER_ATTACHMENT_LIMIT) {
            throw new IllegalArgumentException("maxAttachmentBytes must not be negative: " + maxAttachmentBytes);
        }
    }

    /** A method whose requests take the attachments the server accepts (none unless the server enables them). */
    public ServerMethodDefinition(MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler) {
        this(method, handler, SERVER_ATTACHMENT_LIMIT);
    }

    public static <ReqT, RespT> ServerMethodDefinition<ReqT, RespT> create(
            MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler) {
        return new ServerMethodDefinition<>(method, handler);
    }

    /**
     * This method accepting an attachment of up to {@code maxBytes} with each request message (0: only empty ones),
     * whatever the server's own setting.
     */
    public ServerMethodDefinition<ReqT, RespT> withAttachments(int maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must not be negative: " + maxBytes);
        }
        return new ServerMethodDefinition<>(method, handler, maxBytes);
    }

    /** The same method and attachment limit served by {@code other}. */
    public ServerMethodDefinition<ReqT, RespT> withHandler(ServerCallHandler<ReqT, RespT> other) {
        return new ServerMethodDefinition<>(method, other, maxAttachmentBytes);
    }
}
