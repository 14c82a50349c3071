package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * What an {@link RdmaServerBuilder} hands to its server.
 *
 * @param address                where to listen
 * @param transportMode          AUTO, RDMA or TCP
 * @param maxInboundMessageSize  largest request message accepted
 * @param maxInboundMetadataSize largest request headers accepted (grpc's measure)
 * @param flowControlWindow      per-stream receive window, 0 for rdmarpc's default
 * @param handshakeTimeoutMillis time a new connection has to send HELLO
 * @param methodTypes            kinds of the methods added as services, by full name
 */
record ServerSettings(InetSocketAddress address, TransportMode transportMode, int maxInboundMessageSize,
                      int maxInboundMetadataSize, int flowControlWindow, long handshakeTimeoutMillis,
                      Map<String, io.grpc.MethodDescriptor.MethodType> methodTypes) {
}
