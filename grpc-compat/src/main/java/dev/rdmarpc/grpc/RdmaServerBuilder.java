package dev.rdmarpc.grpc;

import dev.rdmarpc.core.CallExecutors;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.TransportMode;
import io.grpc.BindableService;
import io.grpc.ForwardingServerBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InternalServer;
import io.grpc.internal.KeepAliveManager;
import io.grpc.internal.ServerImplBuilder;

import java.io.File;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A grpc {@link io.grpc.ServerBuilder} whose server takes calls over rdmarpc (RDMA with clients
 * that can, TCP with the rest) on one port instead of HTTP/2: the drop-in replacement for
 * {@code NettyServerBuilder}. Services, interceptors, executors, stream tracers and deadlines are
 * grpc's own, and so is per-message compression (grpc picks the response encoding from the
 * client's {@code grpc-accept-encoding}; messages travel with rdmarpc's COMPRESSED flag).
 *
 * <p>Each client connection is one grpc transport (what {@code ServerTransportFilter}s see), with
 * grpc's server keepalive, {@code maxConnectionIdle}, {@code maxConnectionAge} and the
 * {@code permitKeepAlive*} limits on client PINGs per connection.
 *
 * <p>TLS as with grpc-netty: {@link #useTransportSecurity(File, File)} or server credentials
 * ({@link #forPort(int, ServerCredentials)}: {@code TlsServerCredentials} with client auth NONE, OPTIONAL or
 * REQUIRE). Calls then see {@code Grpc.TRANSPORT_ATTR_SSL_SESSION} (the client's verified certificate) and
 * security level PRIVACY_AND_INTEGRITY; a TLS connection stays on TCP unless {@link #rdmaUnderTls(RdmaUnderTls)}
 * allows RDMA.
 */
public final class RdmaServerBuilder extends ForwardingServerBuilder<RdmaServerBuilder> {
    /** grpc-netty's: a time at least this long means never. */
    private static final long AS_LARGE_AS_INFINITE = TimeUnit.DAYS.toNanos(1000);
    /** grpc-netty's minimum {@code maxConnectionIdle} and {@code maxConnectionAge}. */
    private static final long MIN_CONNECTION_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    private final ServerImplBuilder delegate;
    private final InetSocketAddress address;
    private final Map<String, MethodDescriptor.MethodType> methodTypes = new ConcurrentHashMap<>();
    private TransportMode transportMode = TransportMode.AUTO;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;
    private int maxInboundMetadataSize = GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE;
    private int maxConcurrentCallsPerConnection = RpcServer.DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION;
    private int flowControlWindow;
    private long handshakeTimeoutMillis = 20_000;
    private long keepAliveTimeNanos = GrpcUtil.DEFAULT_SERVER_KEEPALIVE_TIME_NANOS;
    private long keepAliveTimeoutNanos = GrpcUtil.DEFAULT_SERVER_KEEPALIVE_TIMEOUT_NANOS;
    private long maxConnectionIdleNanos = ServerSettings.NEVER;
    private long permitKeepAliveTimeNanos = TimeUnit.MINUTES.toNanos(5);
    private boolean permitKeepAliveWithoutCalls;
    private long maxConnectionAgeNanos = ServerSettings.NEVER;
    private long maxConnectionAgeGraceNanos = ServerSettings.NEVER;
    /** TLS of every connection, null for plaintext. */
    private TlsConfig tls;
    private RdmaUnderTls rdmaUnderTls = RdmaUnderTls.NEVER;
    private dev.rdmarpc.core.RdmaDeviceChoice rdmaDevice;
    /** Set when built from server credentials: security can no longer be changed (as grpc-netty). */
    private boolean securityFromCredentials;
    /** Set once the user chose an executor (or direct): that one is used, not rdmarpc's shared default. */
    private boolean executorChosen;
    private boolean grpcOverHttp2 = true;

    private RdmaServerBuilder(InetSocketAddress address) {
        this.address = address;
        this.delegate = new ServerImplBuilder(this::buildTransportServers);
    }

    /** A server on all interfaces at this port (0 picks a free one; see {@code Server.getPort()}). */
    public static RdmaServerBuilder forPort(int port) {
        return new RdmaServerBuilder(new InetSocketAddress(port));
    }

    /**
     * A server on all interfaces at this port secured by {@code creds}: {@code InsecureServerCredentials},
     * {@code TlsServerCredentials} (PEM or key/trust managers; client auth NONE, OPTIONAL or REQUIRE), or a
     * {@code ChoiceServerCredentials} (its first supported choice).
     *
     * @throws IllegalArgumentException naming the credential type or TLS feature that is not supported
     */
    public static RdmaServerBuilder forPort(int port, ServerCredentials creds) {
        return forPort(port).secured(creds);
    }

    /**
     * A server on this IP socket address secured by {@code creds} (see {@link #forPort(int, ServerCredentials)}).
     *
     * @throws IllegalArgumentException naming the credential type or TLS feature that is not supported
     */
    public static RdmaServerBuilder forAddress(SocketAddress address, ServerCredentials creds) {
        return forAddress(address).secured(creds);
    }

    private RdmaServerBuilder secured(ServerCredentials creds) {
        this.tls = TlsCredentials.forServer(Objects.requireNonNull(creds, "creds"));
        this.securityFromCredentials = true;
        return this;
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

    /**
     * The executor of handlers and call callbacks, as with grpc-netty. Null, or never calling this, means rdmarpc's shared
     * default ({@link CallExecutors#shared()}), not grpc's cached thread pool.
     */
    @Override
    public RdmaServerBuilder executor(Executor executor) {
        executorChosen = executor != null;
        delegate.executor(executor);
        return this;
    }

    @Override
    public RdmaServerBuilder directExecutor() {
        executorChosen = true;
        delegate.directExecutor();
        return this;
    }

    /**
     * Builds the server. Without an executor of the user's, handlers and call callbacks run on rdmarpc's shared
     * default ({@link CallExecutors#shared()}: one lane per transport thread, drained in bursts, blocking allowed),
     * not on grpc's cached thread pool, which pays a thread hand-off per call.
     * {@code -Drdmarpc.grpc.defaultExecutor=grpc} keeps grpc's.
     */
    @Override
    public Server build() {
        Executor shared = executorChosen ? null : DefaultExecutor.choose();
        if (shared != null) {
            delegate.executor(shared);
        }
        return delegate.build();
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

    /**
     * Whether the port also serves stock gRPC clients (grpc-netty, grpc-go, grpcio, …) over HTTP/2, cleartext or under
     * TLS with ALPN {@code h2}, beside rdmarpc clients (default: true). With false they get UNAVAILABLE naming the
     * protocol mismatch.
     */
    public RdmaServerBuilder grpcOverHttp2(boolean serve) {
        this.grpcOverHttp2 = serve;
        return this;
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

    /**
     * Largest request headers accepted, as grpc measures them (each entry's key and value bytes plus 32; default
     * 8 KiB). Advertised to clients in rdmarpc's HELLO (an rdmarpc or grpc-compat client fails a call with larger
     * headers locally); a call that arrives with larger headers is refused with RESOURCE_EXHAUSTED "Header size
     * exceeded max allowed size (N) …" before the service sees it, and the connection carries on.
     */
    @Override
    public RdmaServerBuilder maxInboundMetadataSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMetadataSize must be > 0");
        }
        this.maxInboundMetadataSize = bytes;
        return this;
    }

    /**
     * Most calls one client connection may have open at once, as grpc-netty's (default 100 here, where grpc-netty
     * has no limit: HTTP/2's recommended minimum, and what common servers use). Advertised to clients in rdmarpc's
     * HELLO: their calls beyond it wait for one of the connection's calls to end. A client that ignores it has the
     * calls beyond it refused with UNAVAILABLE before the service sees them (grpc clients retry such a refused call
     * transparently); the connection carries on.
     */
    public RdmaServerBuilder maxConcurrentCallsPerConnection(int calls) {
        if (calls <= 0) {
            throw new IllegalArgumentException("maxConcurrentCallsPerConnection must be > 0");
        }
        this.maxConcurrentCallsPerConnection = calls;
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

    /** TLS with this certificate chain and PKCS#8 private key (PEM files, re-read for new connections when they change). */
    @Override
    public RdmaServerBuilder useTransportSecurity(File certChain, File privateKey) {
        checkSecurityChangeable();
        this.tls = TlsConfig.forServer(certChain.toPath(), privateKey.toPath()).build();
        return this;
    }

    /** TLS with this certificate chain and PKCS#8 private key, read now from PEM streams. */
    @Override
    public RdmaServerBuilder useTransportSecurity(InputStream certChain, InputStream privateKey) {
        checkSecurityChangeable();
        this.tls = TlsConfig.forServer(certChain, privateKey).build();
        return this;
    }

    private void checkSecurityChangeable() {
        if (securityFromCredentials) {
            throw new IllegalStateException("Cannot change security when using ServerCredentials");
        }
    }

    /**
     * Whether a TLS connection may move to RDMA (default {@link RdmaUnderTls#NEVER}: it stays on the encrypted TCP
     * path). With {@link RdmaUnderTls#AUTHENTICATE_ONLY} TLS authenticates the client and protects the RDMA
     * parameters, but the calls then cross the fabric unencrypted: they still carry the TLS session that authenticated
     * the upgrade and report security level PRIVACY_AND_INTEGRITY, as the connection was authenticated by TLS, so
     * choose it only for a trusted fabric.
     * A client is upgraded only when it presented a certificate the server verified (client auth OPTIONAL or
     * REQUIRE); one without stays on TLS over TCP.
     */
    public RdmaServerBuilder rdmaUnderTls(RdmaUnderTls choice) {
        this.rdmaUnderTls = Objects.requireNonNull(choice, "choice");
        return this;
    }

    /**
     * The RDMA device, port and GID the server's connections use (default: chosen per connection from its local
     * address, then the {@code rdmarpc.rdma.*} system properties).
     */
    public RdmaServerBuilder rdmaDevice(dev.rdmarpc.core.RdmaDeviceChoice choice) {
        this.rdmaDevice = Objects.requireNonNull(choice, "choice");
        return this;
    }

    /**
     * PING a connection after this long without receiving anything from it (default 2 hours, as
     * grpc-netty; grpc's 10 s minimum applies; 1000 days or more turns server keepalive off). grpc's
     * {@code KeepAliveManager} runs per connection.
     */
    @Override
    public RdmaServerBuilder keepAliveTime(long keepAliveTime, TimeUnit timeUnit) {
        if (keepAliveTime <= 0) {
            throw new IllegalArgumentException("keepalive time must be positive: " + keepAliveTime);
        }
        long nanos = KeepAliveManager.clampKeepAliveTimeInNanos(timeUnit.toNanos(keepAliveTime));
        this.keepAliveTimeNanos = nanos >= AS_LARGE_AS_INFINITE ? GrpcUtil.SERVER_KEEPALIVE_TIME_NANOS_DISABLED : nanos;
        return this;
    }

    /**
     * Close a connection whose keepalive PING is not answered within this (default 20 s); its
     * calls fail UNAVAILABLE, the rest of the server carries on.
     */
    @Override
    public RdmaServerBuilder keepAliveTimeout(long keepAliveTimeout, TimeUnit timeUnit) {
        if (keepAliveTimeout <= 0) {
            throw new IllegalArgumentException("keepalive timeout must be positive: " + keepAliveTimeout);
        }
        this.keepAliveTimeoutNanos = KeepAliveManager.clampKeepAliveTimeoutInNanos(timeUnit.toNanos(keepAliveTimeout));
        return this;
    }

    /** For tests: keepalive times below grpc's minimums. */
    RdmaServerBuilder keepAliveUnclamped(long timeNanos, long timeoutNanos) {
        this.keepAliveTimeNanos = timeNanos;
        this.keepAliveTimeoutNanos = timeoutNanos;
        return this;
    }

    /**
     * GOAWAY a connection that has had no call for this long (grpc's {@code MaxConnectionIdleManager};
     * at least 1 s; default off); the client opens a new connection for its next call.
     */
    @Override
    public RdmaServerBuilder maxConnectionIdle(long maxConnectionIdle, TimeUnit timeUnit) {
        if (maxConnectionIdle <= 0) {
            throw new IllegalArgumentException("max connection idle must be positive: " + maxConnectionIdle);
        }
        this.maxConnectionIdleNanos = atLeastOneSecond(timeUnit.toNanos(maxConnectionIdle));
        return this;
    }

    /**
     * GOAWAY a connection this old, give or take grpc-netty's 10% jitter (at least 1 s; default
     * off): its open calls finish, new ones go over a new connection.
     */
    @Override
    public RdmaServerBuilder maxConnectionAge(long maxConnectionAge, TimeUnit timeUnit) {
        if (maxConnectionAge <= 0) {
            throw new IllegalArgumentException("max connection age must be positive: " + maxConnectionAge);
        }
        this.maxConnectionAgeNanos = atLeastOneSecond(timeUnit.toNanos(maxConnectionAge));
        return this;
    }

    /** Close a connection still open this long after its age GOAWAY, failing its calls (default: never). */
    @Override
    public RdmaServerBuilder maxConnectionAgeGrace(long maxConnectionAgeGrace, TimeUnit timeUnit) {
        if (maxConnectionAgeGrace < 0) {
            throw new IllegalArgumentException("max connection age grace must be non-negative: " + maxConnectionAgeGrace);
        }
        long nanos = timeUnit.toNanos(maxConnectionAgeGrace);
        this.maxConnectionAgeGraceNanos = nanos >= AS_LARGE_AS_INFINITE ? ServerSettings.NEVER : nanos;
        return this;
    }

    private static long atLeastOneSecond(long nanos) {
        return nanos >= AS_LARGE_AS_INFINITE ? ServerSettings.NEVER : Math.max(nanos, MIN_CONNECTION_LIMIT_NANOS);
    }

    /**
     * The shortest interval at which a client may PING (default 5 minutes, as grpc-netty). A client that pings more
     * often, twice past grpc's {@code KeepAliveEnforcer} allowance, has its connection closed (its calls fail
     * UNAVAILABLE). Unlike grpc-netty no GOAWAY "too_many_pings" is sent first, so a grpc client does not raise its
     * keepalive time.
     */
    @Override
    public RdmaServerBuilder permitKeepAliveTime(long keepAliveTime, TimeUnit timeUnit) {
        if (keepAliveTime < 0) {
            throw new IllegalArgumentException("permit keepalive time must be non-negative: " + keepAliveTime);
        }
        this.permitKeepAliveTimeNanos = timeUnit.toNanos(keepAliveTime);
        return this;
    }

    /** Whether a client may PING while it has no call (default false, as grpc-netty); see {@link #permitKeepAliveTime}. */
    @Override
    public RdmaServerBuilder permitKeepAliveWithoutCalls(boolean permit) {
        this.permitKeepAliveWithoutCalls = permit;
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
                maxInboundMetadataSize, maxConcurrentCallsPerConnection, flowControlWindow, handshakeTimeoutMillis, Map.copyOf(methodTypes),
                new ServerSettings.Connections(keepAliveTimeNanos, keepAliveTimeoutNanos, maxConnectionIdleNanos,
                        maxConnectionAgeNanos, maxConnectionAgeGraceNanos, permitKeepAliveTimeNanos,
                        permitKeepAliveWithoutCalls), tls, rdmaUnderTls, rdmaDevice, grpcOverHttp2), tracerFactories);
    }
}
