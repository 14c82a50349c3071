package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * What an {@link RdmaServerBuilder} hands to its server.
 *
 * @param address                    where to listen
 * @param transportMode              AUTO, RDMA or TCP
 * @param maxInboundMessageSize      largest request message accepted
 * @param maxInboundMetadataSize     largest request headers accepted (grpc's measure)
 * @param maxConcurrentCallsPerConnection most calls one connection may have open at once
 * @param flowControlWindow          per-stream receive window, 0 for rdmarpc's default
 * @param handshakeTimeoutMillis     time a new connection has to send HELLO
 * @param methodTypes                kinds of the methods added as services, by full name
 * @param connections                keepalive and connection lifetimes, per connection
 * @param tls                        TLS around every connection, or null for plaintext
 * @param rdmaUnderTls               whether a TLS connection may move to RDMA
 * @param rdmaDevice                 the RDMA device, port and GID to use, or null to choose per connection
 * @param grpcOverHttp2              whether the port also serves standard gRPC clients over HTTP/2
 */
record ServerSettings(InetSocketAddress address, TransportMode transportMode, int maxInboundMessageSize,
                      int maxInboundMetadataSize, int maxConcurrentCallsPerConnection, int flowControlWindow, long handshakeTimeoutMillis,
                      Map<String, io.grpc.MethodDescriptor.MethodType> methodTypes, Connections connections,
                      dev.rdmarpc.core.TlsConfig tls, dev.rdmarpc.core.RdmaUnderTls rdmaUnderTls,
                      dev.rdmarpc.core.RdmaDeviceChoice rdmaDevice, boolean grpcOverHttp2) {

    /** No lifetime limit ({@code maxConnectionIdle}, {@code maxConnectionAge}, {@code maxConnectionAgeGrace}). */
    static final long NEVER = Long.MAX_VALUE;

    /**
     * Per-connection keepalive and lifetimes, in nanoseconds ({@link #NEVER} or
     * {@code GrpcUtil.SERVER_KEEPALIVE_TIME_NANOS_DISABLED} for off).
     *
     * @param keepAliveTimeNanos        PING a connection after this long without receiving anything
     * @param keepAliveTimeoutNanos     close it if the PING's ACK has not arrived within this
     * @param maxConnectionIdleNanos    GOAWAY a connection without calls for this long
     * @param maxConnectionAgeNanos     GOAWAY a connection this old (grpc's ±10% jitter is added per connection)
     * @param maxConnectionAgeGraceNanos close a connection still open this long after its age GOAWAY
     * @param permitKeepAliveTimeNanos  the shortest interval at which a client may PING (grpc's {@code KeepAliveEnforcer})
     * @param permitKeepAliveWithoutCalls whether a client may PING while it has no call
     */
    record Connections(long keepAliveTimeNanos, long keepAliveTimeoutNanos, long maxConnectionIdleNanos,
                       long maxConnectionAgeNanos, long maxConnectionAgeGraceNanos, long permitKeepAliveTimeNanos,
                       boolean permitKeepAliveWithoutCalls) {

        boolean keepAliveEnabled() {
            return keepAliveTimeNanos != io.grpc.internal.GrpcUtil.SERVER_KEEPALIVE_TIME_NANOS_DISABLED;
        }

        boolean needsTimer() {
            return maxConnectionIdleNanos != NEVER || maxConnectionAgeNanos != NEVER;
        }
    }
}
