package dev.rdmarpc.grpc;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcConnection;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.DisconnectError;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.KeepAliveManager;
import io.grpc.internal.KeepAliveManager.ClientKeepAlivePinger;
import io.grpc.internal.SimpleDisconnectError;
import io.grpc.internal.StatsTraceContext;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

import javax.net.ssl.SSLSession;

/**
 * One grpc client transport: exactly one rdmarpc connection (a core {@link RpcConnection}, shut
 * down when it closes so that it never reconnects). It is ready once HELLO is exchanged; when the
 * connection closes it reports shutdown and, once its streams are gone, termination, and grpc
 * opens a new transport.
 * With keepalive configured it runs grpc's {@link KeepAliveManager} as grpc-netty does: rdmarpc
 * PINGs after {@code keepAliveTime} without received data, and a shutdown with UNAVAILABLE when a
 * PING's ACK does not arrive within {@code keepAliveTimeout}.
 */
final class RdmaClientTransport implements ConnectionClientTransport,
        ClientKeepAlivePinger.TransportWithDisconnectReason {
    private final InternalLogId logId;
    private final InetSocketAddress address;
    private final String authority;
    private final String userAgent;
    private final byte[] userAgentBytes;
    private final Attributes eagAttrs;
    private final ClientSettings settings;
    private final MethodCache methods;
    private final KeepAliveManager keepAlive;
    private final Object lock = new Object();

    private Listener listener;
    private volatile RpcConnection channel;
    private volatile Attributes attributes;
    private volatile SocketAddress localAddress;
    private volatile String transportName;
    /** The connection's TLS session (after an RDMA upgrade, the one that authenticated it); null for plaintext. */
    private volatile SSLSession sslSession;

    // guarded by lock
    private Status shutdownStatus;
    /** grpc's listener has heard transportShutdown: transportTerminated may follow (never before, grpc checks). */
    private boolean shutdownTold;
    private boolean terminated;
    private final OpenStreams streams = new OpenStreams();
    private int inUseStreams;

    RdmaClientTransport(InetSocketAddress address, String authority, String userAgent, Attributes eagAttrs,
                        ClientSettings settings, MethodCache methods, ScheduledExecutorService timer) {
        this.address = address;
        this.authority = authority;
        this.userAgent = userAgent;
        this.userAgentBytes = userAgent.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        this.eagAttrs = eagAttrs;
        this.settings = settings;
        this.methods = methods;
        this.logId = InternalLogId.allocate(getClass(), address.toString());
        this.attributes = baseAttributes(null);
        this.keepAlive = settings.keepAliveEnabled()
                ? new KeepAliveManager(new ClientKeepAlivePinger(this), timer, settings.keepAliveTimeNanos(),
                        settings.keepAliveTimeoutNanos(), settings.keepAliveWithoutCalls())
                : null;
    }

    private Attributes baseAttributes(SocketAddress local) {
        Attributes.Builder b = Attributes.newBuilder()
                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, address)
                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, sslSession != null ? SecurityLevel.PRIVACY_AND_INTEGRITY : SecurityLevel.NONE)
                .set(GrpcAttributes.ATTR_CLIENT_EAG_ATTRS, eagAttrs);
        if (sslSession != null) {
            b.set(Grpc.TRANSPORT_ATTR_SSL_SESSION, sslSession);
        }
        if (local != null) {
            b.set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, local);
        }
        if (transportName != null) {
            b.set(RdmaAttributes.TRANSPORT, transportName);
        }
        return b.build();
    }

    @Override
    public Runnable start(Listener transportListener) {
        this.listener = transportListener;
        RpcConnection impl;
        try {
            String host = address.isUnresolved() ? address.getHostString() : address.getAddress().getHostAddress();
            RpcChannel.Builder b = RpcChannel.forAddress(host, address.getPort())
                    .transportMode(settings.transportMode())
                    .wireProtocol(settings.wireProtocol())
                    .maxInboundMessageSize(settings.maxInboundMessageSize())
                    .maxInboundMetadataSize(settings.maxInboundMetadataSize())
                    .connectTimeout(Duration.ofMillis(settings.connectTimeoutMillis()))
                    .executor(Deliveries.EXECUTOR);
            if (settings.flowControlWindow() > 0) {
                b.flowControlWindow(settings.flowControlWindow());
            }
            if (settings.tls() != null) {
                b.tls(settings.tls().withAuthorityOverride(tlsHost(authority))).rdmaUnderTls(settings.rdmaUnderTls());
            }
            if (settings.rdmaDevice() != null) {
                b.rdmaDevice(settings.rdmaDevice());
            }
            impl = b.buildConnection();
        } catch (RuntimeException e) {
            Status s = Status.UNAVAILABLE.withDescription("cannot open an rdmarpc connection to " + address + ": " + e).withCause(e);
            return () -> connectionLost(s, SimpleDisconnectError.UNKNOWN);
        }
        channel = impl;
        impl.setCloseListener(why -> connectionLost(Statuses.toGrpc(why), SimpleDisconnectError.CONNECTION_RESET));
        // Asynchronously: grpc's listener must not be called from inside start().
        impl.connect().whenCompleteAsync((v, error) -> {
            if (error == null) {
                connected(impl);
            } else {
                Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                dev.rdmarpc.core.Status s = dev.rdmarpc.core.Status.fromThrowable(cause);
                Status status = s.getCode() == dev.rdmarpc.core.Status.Code.UNKNOWN
                        ? Status.UNAVAILABLE.withDescription("cannot connect to " + address + ": " + cause).withCause(cause)
                        : Statuses.toGrpc(s);
                connectionLost(status, SimpleDisconnectError.UNKNOWN);
            }
        }, Deliveries.pool());
        return null;
    }

    /** Whether the connection ended up speaking gRPC over HTTP/2 (core found a standard gRPC server). */
    boolean speaksHttp2() {
        return "h2".equals(transportName);
    }

    private void connected(RpcConnection impl) {
        localAddress = impl.localAddress();
        transportName = impl.transportName();
        sslSession = impl.sslSession();
        Attributes filtered = listener.filterTransport(baseAttributes(localAddress));
        synchronized (lock) {
            attributes = filtered;
            if (shutdownStatus != null) {
                return;
            }
        }
        if (keepAlive != null) {
            keepAlive.onTransportStarted();
        }
        listener.transportReady();
    }

    /** The host the server's certificate must name: the authority's (the dialled one, or grpc's override). */
    private static String tlsHost(String authority) {
        String host = GrpcUtil.authorityToUri(authority).getHost();
        return host != null && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /** Something arrived from the server: keepalive need not ping for a while (as grpc-netty reports every read). */
    void dataReceived() {
        if (keepAlive != null) {
            keepAlive.onDataReceived();
        }
    }

    /** The connection failed or closed: no new streams; grpc is told, and terminates us once streams end. */
    private void connectionLost(Status status, DisconnectError error) {
        boolean notifyShutdown;
        synchronized (lock) {
            notifyShutdown = shutdownStatus == null;
            if (notifyShutdown) {
                shutdownStatus = status;
            }
        }
        if (keepAlive != null) {
            keepAlive.onTransportTermination();
        }
        RpcConnection impl = channel;
        if (impl != null) {
            impl.shutdown(); // never reconnect: grpc makes a new transport
        }
        if (notifyShutdown) {
            shutdownTold(status, error);
        }
    }

    /**
     * Tells grpc the transport is shut down (its status set by the caller, once), then terminated if no stream is left.
     * A stream that closes while grpc is being told leaves the termination to this call: grpc's listener refuses to
     * hear of it first.
     */
    private void shutdownTold(Status status, DisconnectError error) {
        listener.transportShutdown(status, error);
        boolean notifyTerminated;
        synchronized (lock) {
            shutdownTold = true;
            notifyTerminated = terminationDue();
        }
        if (notifyTerminated) {
            listener.transportTerminated();
        }
    }

    /** Under the lock: whether grpc is to hear transportTerminated now (marked told if so). */
    private boolean terminationDue() {
        if (shutdownTold && streams.isEmpty() && !terminated) {
            terminated = true;
            return true;
        }
        return false;
    }

    @Override
    public ClientStream newStream(MethodDescriptor<?, ?> method, Metadata headers, CallOptions callOptions,
                                  ClientStreamTracer[] tracers) {
        // No tracers (the usual case): grpc's shared no-op context, as its server uses for no tracer factories.
        StatsTraceContext stats = tracers.length == 0 ? StatsTraceContext.NOOP
                : StatsTraceContext.newClientContext(tracers, attributes, headers);
        return new RdmaClientStream(this, method, headers, callOptions, stats);
    }

    /**
     * Registers a stream that is starting; returns null, or the status to refuse it with when the
     * transport is already shutting down (the stream has not been sent: grpc may retry it elsewhere).
     */
    Status streamStarting(RdmaClientStream stream, boolean countsForInUse) {
        boolean inUse = false;
        boolean active;
        synchronized (lock) {
            if (shutdownStatus != null) {
                return shutdownStatus;
            }
            active = streams.isEmpty();
            streams.add(stream);
            if (countsForInUse && inUseStreams++ == 0) {
                inUse = true;
            }
        }
        if (active && keepAlive != null) {
            keepAlive.onTransportActive();
        }
        if (inUse) {
            listener.transportInUse(true);
        }
        return null;
    }

    /** A started stream has closed its listener. */
    void streamClosed(RdmaClientStream stream, boolean countsForInUse) {
        boolean notInUse = false;
        boolean notifyTerminated = false;
        boolean idle;
        synchronized (lock) {
            if (!streams.remove(stream)) {
                return;
            }
            idle = streams.isEmpty();
            if (countsForInUse && --inUseStreams == 0) {
                notInUse = true;
            }
            notifyTerminated = terminationDue();
        }
        if (idle && keepAlive != null) {
            keepAlive.onTransportIdle();
        }
        if (notInUse) {
            listener.transportInUse(false);
        }
        if (notifyTerminated) {
            listener.transportTerminated();
        }
    }

    RpcConnection channel() {
        return channel;
    }

    dev.rdmarpc.core.MethodDescriptor<InputStream, InputStream> coreMethod(MethodDescriptor<?, ?> method) {
        return methods.get(method.getFullMethodName(), method.getType());
    }

    /** The user-agent header's value as sent with every call (shared: not to be modified). */
    byte[] userAgentBytes() {
        return userAgentBytes;
    }

    int maxInboundMessageSize() {
        return settings.maxInboundMessageSize();
    }

    int maxInboundMetadataSize() {
        return settings.maxInboundMetadataSize();
    }

    InetSocketAddress remoteAddress() {
        return address;
    }

    String authority() {
        return authority;
    }

    /**
     * Sends an rdmarpc PING: {@code onSuccess} with the round-trip time once the server's ACK arrives,
     * {@code onFailure} with UNAVAILABLE if the connection is or goes away first, or with the shutdown
     * status once the transport is shut down. A server that never answers leaves the callback
     * pending (grpc's keepalive has its own timeout).
     */
    @Override
    public void ping(PingCallback callback, Executor executor) {
        Status down;
        synchronized (lock) {
            down = shutdownStatus;
        }
        RpcConnection impl = channel;
        if (down == null && impl == null) {
            down = Status.UNAVAILABLE.withDescription("the rdmarpc transport to " + address + " is not started");
        }
        if (down != null) {
            Status failure = down;
            executor.execute(() -> callback.onFailure(failure));
            return;
        }
        impl.ping().whenComplete((rtt, error) -> {
            if (error == null) {
                dataReceived();
                executor.execute(() -> callback.onSuccess(rtt));
            } else {
                Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                Status status = Statuses.toGrpc(dev.rdmarpc.core.Status.fromThrowable(cause));
                Status failure = status.getCode() == Status.Code.UNKNOWN
                        ? Status.UNAVAILABLE.withDescription("ping to " + address + " failed: " + cause).withCause(cause)
                        : status;
                executor.execute(() -> callback.onFailure(failure));
            }
        });
    }

    @Override
    public void shutdown(Status reason) {
        shutdown(reason, SimpleDisconnectError.SUBCHANNEL_SHUTDOWN);
    }

    private void shutdown(Status reason, DisconnectError error) {
        synchronized (lock) {
            if (shutdownStatus != null) {
                return;
            }
            shutdownStatus = reason;
        }
        // Pings fail once shut down: keepalive stops rather than cut the calls still draining.
        if (keepAlive != null) {
            keepAlive.onTransportTermination();
        }
        RpcConnection impl = channel;
        if (impl != null) {
            impl.shutdown();
        }
        shutdownTold(reason, error);
    }

    @Override
    public void shutdownNow(Status reason) {
        shutdownNow(reason, SimpleDisconnectError.SUBCHANNEL_SHUTDOWN);
    }

    /** Also grpc's keepalive's way out: a PING unanswered within the timeout ends the transport and its calls. */
    @Override
    public void shutdownNow(Status reason, DisconnectError error) {
        shutdown(reason, error);
        List<RdmaClientStream> copy;
        synchronized (lock) {
            copy = streams.snapshot();
        }
        for (RdmaClientStream s : copy) {
            s.cancel(reason);
        }
        RpcConnection impl = channel;
        if (impl != null) {
            impl.shutdownNow();
        }
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
    }

    @Override
    public InternalLogId getLogId() {
        return logId;
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        SettableFuture<SocketStats> f = SettableFuture.create();
        f.set(null);
        return f;
    }

    @Override
    public String toString() {
        return "RdmaClientTransport{" + logId.getId() + ", " + address + "}";
    }

    static boolean countsForInUse(CallOptions options) {
        return GrpcUtil.shouldBeCountedForInUse(options);
    }
}
