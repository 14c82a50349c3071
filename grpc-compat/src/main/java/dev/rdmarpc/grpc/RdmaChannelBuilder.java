package dev.rdmarpc.grpc;

import dev.rdmarpc.core.CallExecutors;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.WireProtocol;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.ForwardingChannelBuilder2;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.KeepAliveManager;
import io.grpc.internal.ManagedChannelImplBuilder;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A grpc {@link io.grpc.ManagedChannelBuilder} whose channels carry calls over rdmarpc (RDMA when
 * both sides can, TCP otherwise) instead of HTTP/2: the drop-in replacement for
 * {@code NettyChannelBuilder}. Name resolution, load balancing, retries, interceptors, deadlines
 * and idle mode are grpc's own; each grpc transport is one rdmarpc connection, or, to a standard gRPC server
 * (see {@link #wireProtocol}), grpc-netty's when it is on the class path.
 *
 * <p>Keepalive is grpc's own ({@code KeepAliveManager}, as in grpc-netty): with {@link #keepAliveTime}
 * set, a connection that received nothing for that long sends an rdmarpc PING, and one whose PING
 * is not acknowledged within {@link #keepAliveTimeout} is closed with UNAVAILABLE, failing its calls
 * so that grpc reconnects.
 *
 * <p>TLS as with grpc-netty: {@link #useTransportSecurity()} (the JDK's trust roots), or channel credentials
 * ({@link #forTarget(String, ChannelCredentials)}: {@code TlsChannelCredentials} with PEM or key/trust managers,
 * mutual TLS, {@code InsecureChannelCredentials}, composite call credentials). The server's certificate must name
 * the channel's authority (or {@code overrideAuthority}). Calls then see {@code Grpc.TRANSPORT_ATTR_SSL_SESSION}
 * and security level PRIVACY_AND_INTEGRITY, and a TLS connection stays on TCP unless
 * {@link #rdmaUnderTls(RdmaUnderTls)} allows RDMA. Not carried: HTTP CONNECT proxies.
 */
public final class RdmaChannelBuilder extends ForwardingChannelBuilder2<RdmaChannelBuilder> {
    /** As grpc-netty: a keepalive time this long or longer disables keepalive. */
    private static final long AS_LARGE_AS_INFINITE = TimeUnit.DAYS.toNanos(1000L);

    private final ManagedChannelImplBuilder delegate;
    private TransportMode transportMode = TransportMode.AUTO;
    private WireProtocol wireProtocol = WireProtocol.AUTO;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;
    private int maxInboundMetadataSize = GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE;
    private int flowControlWindow;
    private long connectTimeoutMillis = 20_000;
    private long keepAliveTimeNanos = GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED;
    private long keepAliveTimeoutNanos = GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS;
    private boolean keepAliveWithoutCalls;
    /** TLS of every connection, null for plaintext. */
    private TlsConfig tls;
    private RdmaUnderTls rdmaUnderTls = RdmaUnderTls.NEVER;
    private dev.rdmarpc.core.RdmaDeviceChoice rdmaDevice;
    /** The channel credentials it was built from, or null: security then comes from {@link #tls}. */
    private ChannelCredentials credentials;
    /** Set when built from channel credentials: security can no longer be changed (as grpc-netty). */
    private boolean securityFromCredentials;
    /** Set once the user chose an executor (or direct): that one is used, not rdmarpc's shared default. */
    private boolean executorChosen;

    private RdmaChannelBuilder(String target) {
        this.delegate = new ManagedChannelImplBuilder(target, this::buildTransportFactory, this::defaultPort);
        init();
    }

    private RdmaChannelBuilder(String target, ChannelCredentials creds, TlsCredentials.Client security) {
        this.delegate = new ManagedChannelImplBuilder(target, creds, security.callCredentials(), this::buildTransportFactory,
                this::defaultPort);
        fromCredentials(creds, security);
        init();
    }

    private RdmaChannelBuilder(SocketAddress address, ChannelCredentials creds, TlsCredentials.Client security) {
        this.delegate = new ManagedChannelImplBuilder(address, authorityOf(address), creds, security.callCredentials(),
                this::buildTransportFactory, this::defaultPort);
        fromCredentials(creds, security);
        init();
    }

    private void fromCredentials(ChannelCredentials creds, TlsCredentials.Client security) {
        this.credentials = creds;
        this.tls = security.tls();
        this.securityFromCredentials = true;
    }

    private int defaultPort() {
        return tls != null ? GrpcUtil.DEFAULT_PORT_SSL : GrpcUtil.DEFAULT_PORT_PLAINTEXT;
    }

    private static String authorityOf(SocketAddress address) {
        return address instanceof InetSocketAddress inet
                ? GrpcUtil.authorityFromHostAndPort(inet.getHostString(), inet.getPort())
                : address.toString();
    }

    private RdmaChannelBuilder(SocketAddress address) {
        this.delegate = new ManagedChannelImplBuilder(address, authorityOf(address), this::buildTransportFactory,
                this::defaultPort);
        init();
    }

    private void init() {
        // A proxy would be an HTTP CONNECT tunnel: not for rdmarpc connections.
        delegate.proxyDetector(GrpcUtil.NOOP_PROXY_DETECTOR);
    }

    /** A channel to {@code host:port}, resolved by grpc's default name resolver (DNS). */
    public static RdmaChannelBuilder forAddress(String host, int port) {
        return forTarget(GrpcUtil.authorityFromHostAndPort(host, port));
    }

    /** A channel to one socket address, without name resolution. */
    public static RdmaChannelBuilder forAddress(SocketAddress address) {
        return new RdmaChannelBuilder(Objects.requireNonNull(address, "address"));
    }

    /**
     * A channel to a grpc target: {@code "host:port"}, {@code "dns:///host:port"}, or any scheme of a
     * registered name resolver (for example a static list of addresses).
     */
    public static RdmaChannelBuilder forTarget(String target) {
        return new RdmaChannelBuilder(Objects.requireNonNull(target, "target"));
    }

    /**
     * A channel to {@code host:port} secured by {@code creds}.
     *
     * @throws IllegalArgumentException naming the credential type or TLS feature that is not supported
     */
    public static RdmaChannelBuilder forAddress(String host, int port, ChannelCredentials creds) {
        return forTarget(GrpcUtil.authorityFromHostAndPort(host, port), creds);
    }

    /**
     * A channel to a grpc target secured by {@code creds}: {@code InsecureChannelCredentials},
     * {@code TlsChannelCredentials} (PEM or key/trust managers, mutual TLS), {@code CompositeChannelCredentials}
     * of those with call credentials, or a {@code ChoiceChannelCredentials} (its first supported choice).
     *
     * @throws IllegalArgumentException naming the credential type or TLS feature that is not supported
     */
    public static RdmaChannelBuilder forTarget(String target, ChannelCredentials creds) {
        Objects.requireNonNull(target, "target");
        return new RdmaChannelBuilder(target, creds, TlsCredentials.forChannel(Objects.requireNonNull(creds, "creds")));
    }

    /**
     * A channel to one socket address secured by {@code creds}, without name resolution.
     *
     * @throws IllegalArgumentException naming the credential type or TLS feature that is not supported
     */
    public static RdmaChannelBuilder forAddress(SocketAddress address, ChannelCredentials creds) {
        Objects.requireNonNull(address, "address");
        return new RdmaChannelBuilder(address, creds, TlsCredentials.forChannel(Objects.requireNonNull(creds, "creds")));
    }

    @Override
    protected ManagedChannelBuilder<?> delegate() {
        return delegate;
    }

    /**
     * The executor of call callbacks, as with grpc-netty. Null, or never calling this, means rdmarpc's shared
     * default ({@link CallExecutors#shared()}), not grpc's cached thread pool.
     */
    @Override
    public RdmaChannelBuilder executor(Executor executor) {
        executorChosen = executor != null;
        delegate.executor(executor);
        return this;
    }

    @Override
    public RdmaChannelBuilder directExecutor() {
        executorChosen = true;
        delegate.directExecutor();
        return this;
    }

    /**
     * Builds the channel. Without an executor of the user's, call callbacks run on rdmarpc's shared
     * default ({@link CallExecutors#shared()}: one lane per transport thread, drained in bursts, blocking allowed),
     * not on grpc's cached thread pool, which pays a thread hand-off per call.
     * {@code -Drdmarpc.grpc.defaultExecutor=grpc} keeps grpc's.
     */
    @Override
    public ManagedChannel build() {
        Executor shared = executorChosen ? null : DefaultExecutor.choose();
        if (shared != null) {
            delegate.executor(shared);
        }
        return delegate.build();
    }

    /** AUTO (default): RDMA when both sides can, TCP otherwise; RDMA or TCP forces one. */
    public RdmaChannelBuilder transportMode(TransportMode mode) {
        this.transportMode = Objects.requireNonNull(mode, "mode");
        return this;
    }

    /**
     * Which protocol the channel speaks (default {@link WireProtocol#AUTO}: rdmarpc's, or standard gRPC over HTTP/2 with
     * a server that answers as a gRPC server, remembered per address for a while); {@link WireProtocol#GRPC} calls
     * standard gRPC servers only (never over RDMA), {@link WireProtocol#RDMARPC} rdmarpc servers only. Calls to a standard
     * gRPC server go through grpc-netty's own transport, made with this builder's credentials, limits, flow-control
     * window, connect timeout and keepalive, when grpc-netty is on the class path (else core's HTTP/2 bridge).
     */
    public RdmaChannelBuilder wireProtocol(WireProtocol protocol) {
        this.wireProtocol = Objects.requireNonNull(protocol, "protocol");
        return this;
    }

    /** Per-stream receive window in bytes (at least 64 KiB; default: rdmarpc's, 2 MiB). */
    public RdmaChannelBuilder flowControlWindow(int bytes) {
        if (bytes < 64 * 1024) {
            throw new IllegalArgumentException("flowControlWindow must be at least 64 KiB, got " + bytes);
        }
        this.flowControlWindow = bytes;
        return this;
    }

    /** Time allowed to connect and exchange HELLO (default 20 s). */
    public RdmaChannelBuilder connectTimeout(long timeout, TimeUnit unit) {
        if (timeout <= 0) {
            throw new IllegalArgumentException("connect timeout must be positive");
        }
        this.connectTimeoutMillis = Math.max(1, unit.toMillis(timeout));
        return this;
    }

    /** Largest response message accepted (default 4 MiB); larger ones fail with RESOURCE_EXHAUSTED. */
    @Override
    public RdmaChannelBuilder maxInboundMessageSize(int bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("maxInboundMessageSize must be >= 0");
        }
        this.maxInboundMessageSize = bytes;
        return this;
    }

    /**
     * Largest response headers or trailers accepted, as grpc measures them (each entry's key and value bytes plus 32;
     * default 8 KiB). Advertised to the server in rdmarpc's HELLO; larger response headers fail the call with
     * RESOURCE_EXHAUSTED "Header size exceeded max allowed size (N) …" (and cancel it on the server), larger
     * trailers replace the call's status with that one. The connection carries on.
     */
    @Override
    public RdmaChannelBuilder maxInboundMetadataSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMetadataSize must be > 0");
        }
        this.maxInboundMetadataSize = bytes;
        return this;
    }

    /** Plaintext connections (the default). */
    @Override
    public RdmaChannelBuilder usePlaintext() {
        checkSecurityChangeable();
        this.tls = null;
        return this;
    }

    /**
     * TLS connections verified with the JDK's default trust roots (the server's certificate must name the
     * channel's authority); for other roots or mutual TLS use {@link #forTarget(String, ChannelCredentials)}.
     */
    @Override
    public RdmaChannelBuilder useTransportSecurity() {
        checkSecurityChangeable();
        this.tls = TlsConfig.forClient().build();
        return this;
    }

    private void checkSecurityChangeable() {
        if (securityFromCredentials) {
            throw new IllegalStateException("Cannot change security when using ChannelCredentials");
        }
    }

    /**
     * Whether a TLS connection may move to RDMA (default {@link RdmaUnderTls#NEVER}: it stays on the encrypted TCP
     * path). With {@link RdmaUnderTls#AUTHENTICATE_ONLY} TLS authenticates the server and protects the RDMA
     * parameters, but the calls then cross the fabric unencrypted: they still carry the TLS session that authenticated
     * the upgrade and report security level PRIVACY_AND_INTEGRITY, as the connection was authenticated by TLS, so
     * choose it only for a trusted fabric.
     */
    public RdmaChannelBuilder rdmaUnderTls(RdmaUnderTls choice) {
        this.rdmaUnderTls = Objects.requireNonNull(choice, "choice");
        return this;
    }

    /**
     * The RDMA device, port and GID the channel's connections use (default: chosen per connection from its local
     * address, then the {@code rdmarpc.rdma.*} system properties).
     */
    public RdmaChannelBuilder rdmaDevice(dev.rdmarpc.core.RdmaDeviceChoice choice) {
        this.rdmaDevice = Objects.requireNonNull(choice, "choice");
        return this;
    }

    /**
     * Sends a keepalive PING after this long without data received on a connection (grpc's minimum,
     * 10 s, applies; 1000 days or more disables keepalive, the default).
     */
    @Override
    public RdmaChannelBuilder keepAliveTime(long time, TimeUnit unit) {
        if (time <= 0) {
            throw new IllegalArgumentException("keepalive time must be positive");
        }
        long nanos = KeepAliveManager.clampKeepAliveTimeInNanos(unit.toNanos(time));
        this.keepAliveTimeNanos = nanos >= AS_LARGE_AS_INFINITE ? GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED : nanos;
        return this;
    }

    /** How long a keepalive PING may wait for its ACK before the connection is closed (default 20 s). */
    @Override
    public RdmaChannelBuilder keepAliveTimeout(long timeout, TimeUnit unit) {
        if (timeout <= 0) {
            throw new IllegalArgumentException("keepalive timeout must be positive");
        }
        this.keepAliveTimeoutNanos = KeepAliveManager.clampKeepAliveTimeoutInNanos(unit.toNanos(timeout));
        return this;
    }

    /** Whether keepalive PINGs are also sent on connections without calls (default false). */
    @Override
    public RdmaChannelBuilder keepAliveWithoutCalls(boolean enable) {
        this.keepAliveWithoutCalls = enable;
        return this;
    }

    /**
     * Keepalive time and timeout without grpc's minimums, for tests in this package that cannot
     * wait 10 s for a first PING.
     */
    RdmaChannelBuilder keepAliveUnclamped(long timeNanos, long timeoutNanos) {
        this.keepAliveTimeNanos = timeNanos;
        this.keepAliveTimeoutNanos = timeoutNanos;
        return this;
    }

    /** grpc's census stats interceptor on or off (tests use their own, as with grpc's transports). */
    void setStatsEnabled(boolean enabled) {
        delegate.setStatsEnabled(enabled);
    }

    /** grpc's census tracing interceptor on or off. */
    void setTracingEnabled(boolean enabled) {
        delegate.setTracingEnabled(enabled);
    }

    long keepAliveTimeNanos() {
        return keepAliveTimeNanos;
    }

    long keepAliveTimeoutNanos() {
        return keepAliveTimeoutNanos;
    }

    boolean keepAliveWithoutCalls() {
        return keepAliveWithoutCalls;
    }

    private ClientTransportFactory buildTransportFactory() {
        ClientSettings settings = new ClientSettings(transportMode, maxInboundMessageSize,
                maxInboundMetadataSize, flowControlWindow, connectTimeoutMillis,
                keepAliveTimeNanos, keepAliveTimeoutNanos, keepAliveWithoutCalls, tls, rdmaUnderTls, rdmaDevice, wireProtocol);
        return new RdmaClientTransportFactory(settings,
                GrpcNetty.onClassPath() ? new Http2Transports(settings, http2Credentials()) : null);
    }

    /** The same security for the channel's HTTP/2 connections to standard gRPC servers (grpc-netty's transports). */
    private ChannelCredentials http2Credentials() {
        if (credentials != null) {
            return credentials;
        }
        return tls == null ? InsecureChannelCredentials.create() : TlsChannelCredentials.create();
    }
}
