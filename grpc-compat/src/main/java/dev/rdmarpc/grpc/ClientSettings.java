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
 * @param keepAliveTimeNanos     time without received data before a keepalive PING, or
 *                               {@code GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED}
 * @param keepAliveTimeoutNanos  time a keepalive PING may wait for its ACK before the connection is given up
 * @param keepAliveWithoutCalls  whether keepalive PINGs are also sent while the connection has no calls
 * @param tls                    TLS around each connection (its authority names the host to verify), or null
 * @param rdmaUnderTls           whether a TLS connection may move to RDMA
 * @param rdmaDevice             the RDMA device, port and GID to use, or null to choose per connection
 * @param wireProtocol           rdmarpc's protocol, gRPC over HTTP/2, or whichever the server answers with
 */
record ClientSettings(TransportMode transportMode, int maxInboundMessageSize, int maxInboundMetadataSize,
                      int flowControlWindow, long connectTimeoutMillis,
                      long keepAliveTimeNanos, long keepAliveTimeoutNanos, boolean keepAliveWithoutCalls,
                      dev.rdmarpc.core.TlsConfig tls, dev.rdmarpc.core.RdmaUnderTls rdmaUnderTls,
                      dev.rdmarpc.core.RdmaDeviceChoice rdmaDevice, dev.rdmarpc.core.WireProtocol wireProtocol) {

    /** Plaintext settings. */
    ClientSettings(TransportMode transportMode, int maxInboundMessageSize, int maxInboundMetadataSize,
                   int flowControlWindow, long connectTimeoutMillis,
                   long keepAliveTimeNanos, long keepAliveTimeoutNanos, boolean keepAliveWithoutCalls) {
        this(transportMode, maxInboundMessageSize, maxInboundMetadataSize, flowControlWindow, connectTimeoutMillis,
                keepAliveTimeNanos, keepAliveTimeoutNanos, keepAliveWithoutCalls, null, dev.rdmarpc.core.RdmaUnderTls.NEVER, null,
                dev.rdmarpc.core.WireProtocol.AUTO);
    }

    /** The same settings speaking {@code protocol}. */
    ClientSettings withWireProtocol(dev.rdmarpc.core.WireProtocol protocol) {
        return new ClientSettings(transportMode, maxInboundMessageSize, maxInboundMetadataSize, flowControlWindow,
                connectTimeoutMillis, keepAliveTimeNanos, keepAliveTimeoutNanos, keepAliveWithoutCalls, tls, rdmaUnderTls,
                rdmaDevice, protocol);
    }

    boolean keepAliveEnabled() {
        return keepAliveTimeNanos != io.grpc.internal.GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED;
    }
}
