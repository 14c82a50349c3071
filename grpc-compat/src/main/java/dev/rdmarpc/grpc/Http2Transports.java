package dev.rdmarpc.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ChannelLogger;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.ClientTransportFactory.ClientTransportOptions;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * One {@link RdmaChannelBuilder} channel's connections to standard gRPC servers: grpc-netty's own transports, made
 * with the channel's credentials, message and metadata limits, flow-control window, connect timeout and keepalive.
 * A channel calls a gRPC-over-HTTP/2 server exactly as a {@code NettyChannelBuilder} channel does. Made on first use;
 * thread-safe. Only made when {@link GrpcNetty#onClassPath()} (grpc-netty is an optional dependency).
 */
final class Http2Transports {
    private final ClientSettings settings;
    private final ChannelCredentials credentials;
    private ClientTransportFactory factory; // guarded by this
    private boolean closed; // guarded by this

    Http2Transports(ClientSettings settings, ChannelCredentials credentials) {
        this.settings = settings;
        this.credentials = credentials;
    }

    /** A new, unstarted grpc-netty transport to {@code address}. */
    ConnectionClientTransport newTransport(InetSocketAddress address, ClientTransportOptions options,
                                           ChannelLogger logger) {
        ClientTransportFactory f;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the channel's HTTP/2 transports are closed");
            }
            if (factory == null) {
                factory = InternalNettyChannelBuilder.buildTransportFactory(configured(address));
            }
            f = factory;
        }
        return f.newClientTransport(address, options, logger);
    }

    private NettyChannelBuilder configured(InetSocketAddress address) {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(address, credentials)
                .maxInboundMessageSize(settings.maxInboundMessageSize())
                .maxInboundMetadataSize(settings.maxInboundMetadataSize())
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, settings.connectTimeoutMillis()));
        if (settings.flowControlWindow() > 0) {
            b.flowControlWindow(settings.flowControlWindow());
        }
        if (settings.keepAliveEnabled()) {
            b.keepAliveTime(settings.keepAliveTimeNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveTimeout(settings.keepAliveTimeoutNanos(), TimeUnit.NANOSECONDS)
                    .keepAliveWithoutCalls(settings.keepAliveWithoutCalls());
        }
        return b;
    }

    /** Releases grpc-netty's shared resources once the channel's transports are all gone. */
    synchronized void close() {
        closed = true;
        if (factory != null) {
            factory.close();
        }
    }
}
