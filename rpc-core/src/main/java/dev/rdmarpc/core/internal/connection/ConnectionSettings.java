package dev.rdmarpc.core.internal.connection;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ConnectionUpgrader;

import java.util.List;

/**
 * What one side of every connection it makes or accepts advertises and enforces. Internal: public for the
 * channel and server packages and for RpcChannel, RpcServer and CommonBuilder.
 *
 * @param pool                 slab pool for frames and messages
 * @param initialWindow        per-stream receive window, in MESSAGE payload bytes
 * @param maxFramePayload      largest frame payload this side accepts
 * @param maxMessageSize       largest message this side accepts
 * @param mode                 transport choice after HELLO
 * @param upgraders            upgraders consulted unless mode is TCP
 * @param maxConcurrentStreams streams the peer may have open at once (a server's limit; a client advertises 0)
 * @param maxMetadataBytes     metadata bytes this side accepts in one HEADERS or TRAILERS
 * @param maxAttachmentBytes   attachment bytes this side accepts with one message
 */
public record ConnectionSettings(SlabPool pool, int initialWindow, int maxFramePayload, int maxMessageSize,
                                 TransportMode mode, List<ConnectionUpgrader> upgraders,
                                 int maxConcurrentStreams, int maxMetadataBytes, int maxAttachmentBytes) {
    public static final int DEFAULT_WINDOW = 2 << 20;
    public static final int DEFAULT_MAX_FRAME_PAYLOAD = 1 << 20;
    public static final int DEFAULT_MAX_MESSAGE_SIZE = 4 << 20;
    /** Streams a client may have open on one connection: HTTP/2's recommended minimum, and what common servers use. */
    public static final int DEFAULT_MAX_CONCURRENT_STREAMS = 100;
    /** Metadata bytes one HEADERS or TRAILERS may carry: grpc-java's default {@code maxInboundMetadataSize}. */
    public static final int DEFAULT_MAX_METADATA_BYTES = 8 << 10;
    /** Attachment bytes one message may carry. */
    public static final int DEFAULT_MAX_ATTACHMENT_BYTES = 64 << 20;

    /** The same settings without upgraders (a client's retry after its side of the upgrade failed). */
    public ConnectionSettings withoutUpgraders() {
        return new ConnectionSettings(pool, initialWindow, maxFramePayload, maxMessageSize, mode, List.of(),
                maxConcurrentStreams, maxMetadataBytes, maxAttachmentBytes);
    }
}
