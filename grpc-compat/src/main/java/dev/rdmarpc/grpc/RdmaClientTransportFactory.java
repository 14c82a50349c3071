package dev.rdmarpc.grpc;

import dev.rdmarpc.core.WireProtocol;
import io.grpc.ChannelCredentials;
import io.grpc.ChannelLogger;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.SharedResourceHolder;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * grpc's factory of connections for one {@link RdmaChannelBuilder} channel: one rdmarpc connection per transport, or,
 * to a standard gRPC server ({@code WireProtocol.GRPC}, or an address {@code AUTO} found to be one), grpc-netty's when
 * it is on the class path (else core's connection over its HTTP/2 bridge).
 */
final class RdmaClientTransportFactory implements ClientTransportFactory {
    private final ClientSettings settings;
    /** grpc-netty's transports, or null when grpc-netty is not on the class path. */
    private final Http2Transports http2;
    private final MethodCache methods = new MethodCache();
    private final Http2Targets http2Targets = new Http2Targets();
    private final ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    private volatile boolean closed;

    RdmaClientTransportFactory(ClientSettings settings, Http2Transports http2) {
        this.settings = settings;
        this.http2 = http2;
    }

    @Override
    public ConnectionClientTransport newClientTransport(SocketAddress serverAddress, ClientTransportOptions options,
                                                        ChannelLogger channelLogger) {
        if (closed) {
            throw new IllegalStateException("the rdmarpc transport factory is closed");
        }
        if (!(serverAddress instanceof InetSocketAddress address)) {
            throw new IllegalArgumentException("rdmarpc connects to IP socket addresses only, not "
                    + serverAddress.getClass().getName() + " (" + serverAddress + ")");
        }
        WireProtocol protocol = settings.wireProtocol();
        boolean knownHttp2 = protocol == WireProtocol.GRPC || (protocol == WireProtocol.AUTO && http2Targets.isHttp2(address));
        if (knownHttp2 && http2 != null) {
            return http2.newTransport(address, options, channelLogger);
        }
        String userAgent = GrpcUtil.getGrpcUserAgent("rdmarpc", options.getUserAgent());
        RdmaClientTransport rdmarpc = new RdmaClientTransport(address, options.getAuthority(), userAgent,
                options.getEagAttributes(), knownHttp2 ? settings.withWireProtocol(WireProtocol.GRPC) : settings,
                methods, timer);
        if (knownHttp2 || protocol != WireProtocol.AUTO) {
            return rdmarpc;
        }
        return new HandoffClientTransport(rdmarpc,
                http2 == null ? null : () -> http2.newTransport(address, options, channelLogger),
                () -> http2Targets.remember(address));
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return timer;
    }

    @Override
    public SwapChannelCredentialsResult swapChannelCredentials(ChannelCredentials channelCreds) {
        return null;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (http2 != null) {
            http2.close();
        }
        SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
