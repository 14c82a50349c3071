package dev.rdmarpc.core;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.ChannelImpl;
import dev.rdmarpc.core.internal.ClientLiveness;
import dev.rdmarpc.core.internal.ConnectionSettings;
import dev.rdmarpc.core.internal.RpcExecutors;
import dev.rdmarpc.core.internal.Transports;
import dev.rdmarpc.core.spi.TransportConfig;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A client channel to one server ({@code host:port}). It connects on first use, over RDMA when
 * both sides can and TCP otherwise, and reconnects when its connection is lost. Thread-safe;
 * make one per server and share it.
 */
public final class RpcChannel implements Channel, AutoCloseable {
    private final ChannelImpl impl;

    private RpcChannel(ChannelImpl impl) {
        this.impl = impl;
    }

    /** A builder for a "host:port" target (IPv6 hosts in brackets: "[::1]:5000"). */
    public static Builder forTarget(String target) {
        Objects.requireNonNull(target, "target");
        int colon = target.lastIndexOf(':');
        if (colon <= 0 || colon == target.length() - 1) {
            throw new IllegalArgumentException("target must be host:port, got '" + target + "'");
        }
        String host = target.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(target.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in target '" + target + "'", e);
        }
        return forAddress(host, port);
    }

    public static Builder forAddress(String host, int port) {
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        return new Builder(host, port);
    }

    /** A call; made inside a handler, it inherits the handler's call's deadline and cancellation ({@link CallContext}). */
    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        CallContext parent = CurrentCall.get();
        return parent == null ? impl.newCall(method, options)
                : new ChildCall<>(impl.newCall(method, CurrentCall.inherit(options, parent)), parent);
    }

    /**
     * {@link ClientCalls}' pooled async unary call on this channel; false when it must go through {@link #newCall}
     * (also inside a handler, where the call is its call's child).
     */
    <ReqT, RespT> boolean startPooledUnary(MethodDescriptor<ReqT, RespT> method, CallOptions options, ReqT request,
                                           StreamObserver<RespT> observer) {
        return CurrentCall.get() == null && impl.startPooledUnary(method, options, request, observer);
    }

    @Override
    public String authority() {
        return impl.authority();
    }

    /**
     * Lets the next call try to connect at once instead of failing while the reconnect backoff waits, and starts the
     * backoff over (grpc-java's {@code ManagedChannel.resetConnectBackoff}): for when the application knows the server
     * is back.
     */
    public void resetConnectBackoff() {
        impl.resetConnectBackoff();
    }

    /** "rdma" or "tcp" for the current connection, or null when not connected. */
    public String currentTransport() {
        return impl.currentTransport();
    }

    /**
     * The TLS session of the current connection, or null when it is plaintext or there is none. After an RDMA upgrade
     * it is the session that authenticated the server and carried the upgrade (the calls' bytes on RDMA are not
     * encrypted: docs/PROTOCOL.md, "TLS and RDMA").
     */
    public javax.net.ssl.SSLSession currentSslSession() {
        return impl.currentSslSession();
    }

    /**
     * Measures the round trip to the server with a PING frame (connecting first if needed): the future completes
     * with the time in nanoseconds, or fails with a {@link StatusException} (UNAVAILABLE) when the server cannot be
     * reached or the connection closes before the answer.
     */
    public java.util.concurrent.CompletableFuture<Long> ping() {
        return impl.ping();
    }

    /** Lets calls in flight finish, refuses new ones, then closes the connection. */
    public void shutdown() {
        impl.shutdown();
    }

    /** Fails every call in flight with UNAVAILABLE and closes the connection now. */
    public void shutdownNow() {
        impl.shutdownNow();
    }

    public boolean isShutdown() {
        return impl.isShutdown();
    }

    public boolean isTerminated() {
        return impl.isTerminated();
    }

    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return impl.awaitTermination(timeout, unit);
    }

    /** Shuts down, waits up to five seconds for calls to finish, then forces it. */
    @Override
    public void close() {
        shutdown();
        try {
            if (!awaitTermination(5, TimeUnit.SECONDS)) {
                shutdownNow();
            }
        } catch (InterruptedException e) {
            shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Builds an {@link RpcChannel}. */
    public static final class Builder {
        private final String host;
        private final int port;
        private Executor executor;
        private Duration defaultTimeout;
        private int maxInboundMessageSize = ConnectionSettings.DEFAULT_MAX_MESSAGE_SIZE;
        private int maxInboundAttachmentSize = ConnectionSettings.DEFAULT_MAX_ATTACHMENT_BYTES;
        private int flowControlWindow = ConnectionSettings.DEFAULT_WINDOW;
        private TransportMode transportMode = TransportMode.AUTO;
        private WireProtocol wireProtocol = WireProtocol.AUTO;
        private Duration connectTimeout = Duration.ofSeconds(20);
        private SlabPool pool = SlabPool.shared();
        private int ioThreads;
        private Object meterRegistry;
        private TlsConfig tls;
        private RdmaUnderTls rdmaUnderTls = RdmaUnderTls.NEVER;
        private RdmaDeviceChoice rdmaDevice;
        private int maxInboundMetadataSize = ConnectionSettings.DEFAULT_MAX_METADATA_BYTES;
        private Duration keepAliveTime = Duration.ZERO;
        private Duration keepAliveTimeout = Duration.ofSeconds(20);
        private Duration backoffInitial = Duration.ofNanos(ClientLiveness.CHANNEL_DEFAULTS.backoffInitialNanos());
        private Duration backoffMax = Duration.ofNanos(ClientLiveness.CHANNEL_DEFAULTS.backoffMaxNanos());

        private Builder(String host, int port) {
            this.host = Objects.requireNonNull(host, "host");
            this.port = port;
        }

        /**
         * Where callbacks of async calls run. Default: off the I/O threads, on a worker per I/O thread that drains
         * the calls ready in a burst; a callback may block (when it holds up the calls queued behind it for a
         * millisecond, a virtual thread takes them over). Any executor is safe: a call's callbacks run one at a time
         * and never under a lock of rdmarpc's.
         */
        public Builder executor(Executor e) {
            this.executor = e;
            return this;
        }

        /** Runs callbacks on the transport's I/O thread: lowest latency; callbacks must not block. */
        public Builder directExecutor() {
            this.executor = RpcExecutors.direct();
            return this;
        }

        /** Deadline applied to calls that have none (or an earlier one than theirs). */
        public Builder defaultDeadline(Duration timeout) {
            this.defaultTimeout = timeout;
            return this;
        }

        /** Largest response message accepted (default 4 MiB); larger ones fail with RESOURCE_EXHAUSTED. */
        public Builder maxInboundMessageSize(int bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxInboundMessageSize must be positive");
            }
            this.maxInboundMessageSize = bytes;
            return this;
        }

        /**
         * Largest attachment accepted with one response message (default 64 MiB), advertised to the peer in HELLO; a larger
         * one fails the call with RESOURCE_EXHAUSTED before any of its bytes are read. 0 accepts only empty ones.
         */
        public Builder maxInboundAttachmentSize(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxInboundAttachmentSize must not be negative");
            }
            this.maxInboundAttachmentSize = bytes;
            return this;
        }

        /** Per-stream receive window in bytes (default 2 MiB). */
        public Builder flowControlWindow(int bytes) {
            if (bytes < 64 * 1024) {
                throw new IllegalArgumentException("flowControlWindow must be at least 64 KiB");
            }
            this.flowControlWindow = bytes;
            return this;
        }

        /** AUTO (default): RDMA when both sides can, TCP otherwise; or force one. */
        public Builder transportMode(TransportMode mode) {
            this.transportMode = Objects.requireNonNull(mode);
            return this;
        }

        /**
         * Which protocol the channel speaks (default {@link WireProtocol#AUTO}: rdmarpc's, or gRPC over HTTP/2 with a
         * server that answers as a standard gRPC server). Over gRPC over HTTP/2 calls behave as over rdmarpc's
         * protocol (deadlines, cancel, metadata, status, flow control, message limits) and never move to RDMA.
         */
        public Builder wireProtocol(WireProtocol protocol) {
            this.wireProtocol = Objects.requireNonNull(protocol);
            return this;
        }

        /**
         * Time allowed to connect, complete the TLS handshake (with TLS) and exchange HELLO (default 20 s); an attempt
         * whose {@link #reconnectBackoff} is longer may take that long instead (gRPC's MIN_CONNECT_TIMEOUT).
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /**
         * Client keepalive, off by default as in grpc-java: PING the server after this long without receiving anything
         * from it; with no answer within {@link #keepAliveTimeout} the connection is closed and its calls fail with
         * UNAVAILABLE, and the next call opens a new connection. Pings go out whether or not calls are open.
         * {@link Duration#ZERO} turns it off.
         */
        public Builder keepAliveTime(Duration time) {
            if (time.isNegative()) {
                throw new IllegalArgumentException("keepAliveTime must not be negative: " + time);
            }
            this.keepAliveTime = time;
            return this;
        }

        /** How long a keepalive PING waits for an answer (any frame) before the connection is closed (default 20 s). */
        public Builder keepAliveTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("keepAliveTimeout must be positive: " + timeout);
            }
            this.keepAliveTimeout = timeout;
            return this;
        }

        /**
         * gRPC's connection backoff between failed connection attempts: the first retry {@code initial} after the
         * failed attempt started (default 1 s), each next one 1.6 times later with ±20 % jitter, at most {@code max}
         * (default 120 s); an attempt may take the longer of its backoff and {@link #connectTimeout}. Meanwhile calls
         * fail at once with the last attempt's UNAVAILABLE. A successful connection starts the backoff over; so does
         * {@link RpcChannel#resetConnectBackoff()}.
         */
        public Builder reconnectBackoff(Duration initial, Duration max) {
            if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("reconnectBackoff needs 0 < initial <= max: " + initial + ", " + max);
            }
            this.backoffInitial = initial;
            this.backoffMax = max;
            return this;
        }

        /** Slab pool for this channel's buffers (default: the shared pool). */
        public Builder slabPool(SlabPool p) {
            this.pool = Objects.requireNonNull(p);
            return this;
        }

        /** Records client call metrics on this Micrometer {@code MeterRegistry}. */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /** I/O threads of this channel's transport (default: the transport's choice). */
        public Builder ioThreads(int n) {
            this.ioThreads = n;
            return this;
        }

        /**
         * Protects every connection with TLS (default: plaintext). The server must speak TLS; its certificate is
         * verified against the config's trust roots and, unless turned off, must name the host dialled. TLS wraps
         * the TCP connection before the HELLO exchange, so the HELLO and any RDMA parameters in it are protected.
         */
        public Builder tls(TlsConfig config) {
            this.tls = config;
            return this;
        }

        /**
         * Whether a TLS connection may move to RDMA (ignored without TLS). {@link RdmaUnderTls#NEVER} (the default)
         * keeps it on the encrypted TCP path; {@link RdmaUnderTls#AUTHENTICATE_ONLY} lets it upgrade with an
         * authenticated peer, after which the calls' bytes cross the RDMA fabric unencrypted.
         */
        public Builder rdmaUnderTls(RdmaUnderTls choice) {
            this.rdmaUnderTls = Objects.requireNonNull(choice);
            return this;
        }

        /**
         * The RDMA device, port and GID this channel's connections use (default: chosen per connection from its local
         * address, then the {@code rdmarpc.rdma.*} system properties); ignored without the RDMA transport.
         */
        public Builder rdmaDevice(RdmaDeviceChoice choice) {
            this.rdmaDevice = Objects.requireNonNull(choice);
            return this;
        }

        // ---- limits ----

        /**
         * Most metadata bytes a response's HEADERS or TRAILERS may carry (default 8 KiB, as grpc-java's
         * {@code maxInboundMetadataSize}), counted as each entry's key and value bytes plus 32, as HTTP/2 counts
         * header fields; advertised to servers in HELLO. Larger response HEADERS fail the call with
         * RESOURCE_EXHAUSTED "Header size exceeded max allowed size (N) …" and cancel it on the server; larger
         * TRAILERS end it with that status instead of the server's. Decoding stops at the limit; the connection
         * stays open.
         *
         * <p>The channel also respects the limits the server advertises: a request whose metadata is over the
         * server's metadata limit fails at once with RESOURCE_EXHAUSTED and is not sent, and calls beyond the
         * server's concurrent-call limit on the connection wait (their deadlines and cancellation still apply) until
         * one of its calls ends.
         */
        public Builder maxInboundMetadataSize(int bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxInboundMetadataSize must be positive: " + bytes);
            }
            this.maxInboundMetadataSize = bytes;
            return this;
        }

        public RpcChannel build() {
            return new RpcChannel(newImpl(new ClientLiveness(keepAliveTime.toNanos(), keepAliveTimeout.toNanos(),
                    backoffInitial.toNanos(), backoffMax.toNanos())));
        }

        /**
         * Builds a single connection to the target instead of a channel: for code that manages its
         * connections itself (a transport layered on rdmarpc, such as grpc-compat). It has the keepalive set here but
         * no reconnect backoff: its owner decides when to connect again.
         */
        public RpcConnection buildConnection() {
            return new RpcConnection(newImpl(new ClientLiveness(keepAliveTime.toNanos(), keepAliveTimeout.toNanos(), 0, 0)));
        }

        private ChannelImpl newImpl(ClientLiveness liveness) {
            ConnectionSettings settings = new ConnectionSettings(pool, flowControlWindow, ConnectionSettings.DEFAULT_MAX_FRAME_PAYLOAD,
                    maxInboundMessageSize, transportMode, UpgradePolicy.upgraders(transportMode, tls, rdmaUnderTls, false,
                            rdmaDevice),
                    0, maxInboundMetadataSize, maxInboundAttachmentSize);
            var transport = Transports.streamTransport().newClientTransport(
                    new TransportConfig(pool, ioThreads, System.getProperty("rdmarpc.io", "auto"), tls, 0, false, wireProtocol));
            Executor e = executor != null ? executor : RpcExecutors.defaultCallbackExecutor();
            return new ChannelImpl(host, port, transport, settings, e, defaultTimeout,
                    (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()), meterRegistry, liveness);
        }
    }
}
