package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.BindableService;
import io.grpc.ForwardingServerBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.ServerBuilder;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InternalServer;
import io.grpc.internal.ServerImplBuilder;

import java.io.File;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A grpc {@link io.grpc.ServerBuilder} whose server takes calls over rdmarpc (RDMA with clients
 * that can, TCP with the rest) on one port instead of HTTP/2: the drop-in replacement for
 * {@code NettyServerBuilder}. Services, interceptors, executors, stream tracers and deadlines are
 * grpc's own, and so is per-message compression (grpc picks the response encoding from the
 * client's {@code grpc-accept-encoding}; messages travel with rdmarpc's COMPRESSED flag).
 *
 * <p>Not carried: TLS, per-connection transport filters (rdmarpc core reports no connection events
 * to grpc-compat, so the whole server is one grpc transport), and server keepalive pings and
 * connection ages (accepted, not active; rdmarpc answers clients' pings).
 */
public final class RdmaServerBuilder extends ForwardingServerBuilder<RdmaServerBuilder> {
    private final ServerImplBuilder delegate;
    private final InetSocketAddress address;
    private final Map<String, MethodDescriptor.MethodType> methodTypes = new ConcurrentHashMap<>();
    private TransportMode transportMode = TransportMode.AUTO;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;
    private int maxInboundMetadataSize = GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE;
    private int flowControlWindow;
    private long handshakeTimeoutMillis = 20_000;

    private RdmaServerBuilder(InetSocketAddress address) {
        this.address = address;
        this.delegate = new ServerImplBuilder(this::buildTransportServers);
    }

    /** A server on all interfaces at this port (0 picks a free one; see {@code Server.getPort()}). */
    public static RdmaServerBuilder forPort(int port) {
        return new RdmaServerBuilder(new InetSocketAddress(port));
    }

    /** A server on this IP socket address. */
    public static RdmaServerBuilder forAddress(SocketAddress address) {
        if (!(address instanceof InetSocketAddress inet)) {
            throw new IllegalArgumentException("rdmarpc listens on IP socket addresses only, not " + address);
        }
        return new RdmaServerBuilder(inet);
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }

    @Override
    public RdmaServerBuilder addService(ServerServiceDefinition service) {
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            MethodDescriptor<?, ?> d = m.getMethodDescriptor();
            methodTypes.put(d.getFullMethodName(), d.getType());
        }
        delegate.addService(service);
        return this;
    }

    @Override
    public RdmaServerBuilder addService(BindableService bindableService) {
        return addService(bindableService.bindService());
    }

    /** AUTO (default): RDMA with clients that can, TCP with the rest; RDMA or TCP forces one. */
    public RdmaServerBuilder transportMode(TransportMode mode) {
        this.transportMode = Objects.requireNonNull(mode, "mode");
        return this;
    }

    /** Per-stream receive window in bytes (at least 64 KiB; default: rdmarpc's, 2 MiB). */
    public RdmaServerBuilder flowControlWindow(int bytes) {
        if (bytes < 64 * 1024) {
            throw new IllegalArgumentException("flowControlWindow must be at least 64 KiB, got " + bytes);
        }
        this.flowControlWindow = bytes;
        return this;
    }

    /** Largest request message accepted (default 4 MiB); larger ones fail with RESOURCE_EXHAUSTED. */
    @Override
    public RdmaServerBuilder maxInboundMessageSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMessageSize must be > 0");
        }
        this.maxInboundMessageSize = bytes;
        return this;
    }

    /** Largest request headers accepted, as grpc measures them (default 8 KiB). */
    @Override
    public RdmaServerBuilder maxInboundMetadataSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMetadataSize must be > 0");
        }
        this.maxInboundMetadataSize = bytes;
        return this;
    }

    /** Time a new connection has to complete HELLO, and grpc's own handshake timeout. */
    @Override
    public RdmaServerBuilder handshakeTimeout(long timeout, TimeUnit unit) {
        if (timeout <= 0) {
            throw new IllegalArgumentException("handshake timeout must be positive");
        }
        this.handshakeTimeoutMillis = Math.max(1, unit.toMillis(timeout));
        delegate.handshakeTimeout(timeout, unit);
        return this;
    }

    /** Not supported: rdmarpc has no TLS. */
    @Override
    public RdmaServerBuilder useTransportSecurity(File certChain, File privateKey) {
        throw new UnsupportedOperationException("rdmarpc connections carry no TLS");
    }

    /** Not supported: rdmarpc has no TLS. */
    @Override
    public RdmaServerBuilder useTransportSecurity(InputStream certChain, InputStream privateKey) {
        throw new UnsupportedOperationException("rdmarpc connections carry no TLS");
    }

    /**
     * Accepted for compatibility, not active: the server sends no keepalive PINGs. rdmarpc core's
     * server offers no way to send a PING on one of its connections, and reports no per-connection
     * events to grpc-compat (the whole server is one grpc transport). Clients' keepalive works.
     */
    @Override
    public RdmaServerBuilder keepAliveTime(long keepAliveTime, TimeUnit timeUnit) {
        return this;
    }

    /** Accepted for compatibility, not active; see {@link #keepAliveTime}. */
    @Override
    public RdmaServerBuilder keepAliveTimeout(long keepAliveTimeout, TimeUnit timeUnit) {
        return this;
    }

    /**
     * Accepted for compatibility, not active: connections are not closed when idle. rdmarpc core's
     * server reports no per-connection activity and cannot GOAWAY one connection on request.
     */
    @Override
    public RdmaServerBuilder maxConnectionIdle(long maxConnectionIdle, TimeUnit timeUnit) {
        return this;
    }

    /** Accepted for compatibility, not active: connections are not aged out (see {@link #maxConnectionIdle}). */
    @Override
    public RdmaServerBuilder maxConnectionAge(long maxConnectionAge, TimeUnit timeUnit) {
        return this;
    }

    /** Accepted for compatibility, not active (see {@link #maxConnectionAge}). */
    @Override
    public RdmaServerBuilder maxConnectionAgeGrace(long maxConnectionAgeGrace, TimeUnit timeUnit) {
        return this;
    }

    /** Accepted: rdmarpc answers every client ping. */
    @Override
    public RdmaServerBuilder permitKeepAliveTime(long keepAliveTime, TimeUnit timeUnit) {
        return this;
    }

    /** Accepted: rdmarpc answers every client ping. */
    @Override
    public RdmaServerBuilder permitKeepAliveWithoutCalls(boolean permit) {
        return this;
    }

    /** grpc's census stats tracer on or off (tests use their own, as with grpc's transports). */
    void setStatsEnabled(boolean enabled) {
        delegate.setStatsEnabled(enabled);
    }

    /** grpc's census tracing tracer on or off. */
    void setTracingEnabled(boolean enabled) {
        delegate.setTracingEnabled(enabled);
    }

    private InternalServer buildTransportServers(List<? extends ServerStreamTracer.Factory> tracerFactories,
                                                 io.grpc.MetricRecorder metricRecorder) {
        return new RdmaInternalServer(new ServerSettings(address, transportMode, maxInboundMessageSize,
                maxInboundMetadataSize, flowControlWindow, handshakeTimeoutMillis, Map.copyOf(methodTypes)), tracerFactories);
    }
}
