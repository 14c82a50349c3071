package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;

/**
 * What an {@link RdmaChannelBuilder} hands to each connection it opens.
 *
 * @param transportMode          AUTO, RDMA or TCP
 * @param maxInboundMessageSize  largest response message accepted
 * @param maxInboundMetadataSize largest response headers or trailers accepted (grpc's measure)
 * @param flowControlWindow      per-stream receive window, 0 for rdmarpc's default
 * @param connectTimeoutMillis   time allowed to connect and exchange HELLO
 */
record ClientSettings(TransportMode transportMode, int maxInboundMessageSize, int maxInboundMetadataSize,
                      int flowControlWindow, long connectTimeoutMillis) {
}
