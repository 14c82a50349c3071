package dev.rdmarpc.grpc;

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

/** grpc's factory of connections for one {@link RdmaChannelBuilder} channel: one rdmarpc connection per transport. */
final class RdmaClientTransportFactory implements ClientTransportFactory {
    private final ClientSettings settings;
    private final MethodCache methods = new MethodCache();
    private final Http2Targets http2Targets = new Http2Targets();
    private final ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    private volatile boolean closed;

    RdmaClientTransportFactory(ClientSettings settings) {
        this.settings = settings;
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
        String userAgent = GrpcUtil.getGrpcUserAgent("rdmarpc", options.getUserAgent());
        return new RdmaClientTransport(address, options.getAuthority(), userAgent, options.getEagAttributes(), settings, methods,
                timer, http2Targets);
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
        SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
