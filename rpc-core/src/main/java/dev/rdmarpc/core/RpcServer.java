package dev.rdmarpc.core;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.connection.ConnectionGuards;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.internal.connection.Transports;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A server listening on one port for both transports: every connection starts on TCP and moves
 * to RDMA after HELLO when both sides can.
 */
public final class RpcServer implements AutoCloseable {
    /** Default of {@link Builder#maxConcurrentCallsPerConnection}. */
    public static final int DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION = ConnectionSettings.DEFAULT_MAX_CONCURRENT_STREAMS;
    /** Default of {@link Builder#maxInboundMetadataSize} (and of {@link RpcChannel.Builder#maxInboundMetadataSize}). */
    public static final int DEFAULT_MAX_INBOUND_METADATA_SIZE = ConnectionSettings.DEFAULT_MAX_METADATA_BYTES;
    /** Default of {@link Builder#maxConnections}. */
    public static final int DEFAULT_MAX_CONNECTIONS = ServerImpl.DEFAULT_MAX_CONNECTIONS;
    /** Default of {@link Builder#memoryBudget}. */
    public static final long DEFAULT_MEMORY_BUDGET = ServerImpl.DEFAULT_MEMORY_BUDGET;
    /** Default of {@link Builder#connectionFlowControlWindow}. */
    public static final int DEFAULT_CONNECTION_FLOW_CONTROL_WINDOW = ServerImpl.DEFAULT_CONNECTION_WINDOW;

    private final ServerImpl impl;

    private RpcServer(ServerImpl impl) {
        this.impl = impl;
    }

    /** A server on all interfaces at this port (0 picks a free one). */
    public static Builder forPort(int port) {
        return new Builder(new InetSocketAddress(port));
    }

    public static Builder forAddress(InetSocketAddress address) {
        return new Builder(address);
    }

    /**
     * Starts listening.
     *
     * @throws IOException naming the port when it cannot be bound (e.g. already in use)
     */
    public RpcServer start() throws IOException {
        impl.start();
        return this;
    }

    /** The port listened on (the real one when 0 was asked). */
    public int getPort() {
        return impl.port();
    }

    /** Stops accepting new connections and calls; calls in flight run to completion. */
    public RpcServer shutdown() {
        impl.shutdown();
        return this;
    }

    /** Cancels every call in flight (clients get UNAVAILABLE) and closes every connection. */
    public RpcServer shutdownNow() {
        impl.shutdownNow();
        return this;
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

    /** Number of open client connections. */
    public int connectionCount() {
        return impl.connectionCount();
    }

    /** Connections closed at accept because the server already had {@link Builder#maxConnections} open. */
    public long refusedConnectionCount() {
        return impl.refusedConnections();
    }

    /** Graceful shutdown with a grace period: shutdown, wait up to {@code grace}, then shutdownNow. */
    public void shutdown(Duration grace) throws InterruptedException {
        shutdown();
        if (!awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
            shutdownNow();
        }
    }

    /** {@link #shutdown(Duration)} with five seconds of grace. */
    @Override
    public void close() {
        try {
            shutdown(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Builds an {@link RpcServer}; the options it shares with {@link RpcChannel.Builder} are {@link CommonBuilder}'s. */
    public static final class Builder extends CommonBuilder<Builder> {
        private final InetSocketAddress address;
        private final List<ServiceDefinition> services = new ArrayList<>();
        /** Attachments every method accepts; -1 (the default): only methods that enable them do. */
        private int maxInboundAttachmentSize = ServerMethodDefinition.SERVER_ATTACHMENT_LIMIT;
        private int connectionFlowControlWindow = ServerImpl.DEFAULT_CONNECTION_WINDOW;
        private Duration handshakeTimeout = Duration.ofSeconds(20);
        private java.util.function.Function<String, ServerMethodDefinition<?, ?>> fallback;
        private PeerConnectionListener connectionListener;
        private final List<ServerInterceptor> interceptors = new ArrayList<>();
        private int controlFramesPerSecond = ConnectionGuards.DEFAULT_CONTROL_FRAMES_PER_SECOND;
        private int controlFrameBurst = ConnectionGuards.DEFAULT_CONTROL_FRAME_BURST;
        private int maxConcurrentCallsPerConnection = ConnectionSettings.DEFAULT_MAX_CONCURRENT_STREAMS;
        private int maxConnections = ServerImpl.DEFAULT_MAX_CONNECTIONS;
        private long memoryBudget = ServerImpl.DEFAULT_MEMORY_BUDGET;
        private boolean grpcOverHttp2 = true;

        private Builder(InetSocketAddress address) {
            super(ConnectionGuards.DEFAULT_KEEPALIVE_TIME, ConnectionGuards.DEFAULT_KEEPALIVE_TIMEOUT);
            this.address = Objects.requireNonNull(address);
        }

        @Override
        Builder self() {
            return this;
        }

        public Builder addService(BindableService service) {
            return addService(service.bindService());
        }

        public Builder addService(ServiceDefinition service) {
            services.add(Objects.requireNonNull(service));
            return this;
        }

        /**
         * Runs this interceptor on every call of every method of the server (those of {@link #fallbackMethods}
         * too). As in grpc-java, they run before the interceptors a service got from {@link ServerInterceptors},
         * and the last one added runs first.
         */
        public Builder intercept(ServerInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        /**
         * Accepts attachments on every method of this server, up to {@code bytes} with one request message (0: only
         * empty ones). By default a server accepts none except on the methods that enable them
         * ({@link ServiceDefinition#withAttachments}, {@link ServerMethodDefinition#withAttachments}, whose own limit
         * wins over this one). The largest limit is advertised to the client in HELLO; an attachment on a method that
         * takes none, or over the method's limit, fails that call with RESOURCE_EXHAUSTED before any of its bytes are
         * read, and the connection carries on.
         */
        public Builder maxInboundAttachmentSize(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxInboundAttachmentSize must not be negative");
            }
            this.maxInboundAttachmentSize = bytes;
            return this;
        }

        /**
         * Bytes of requests one connection may have the server hold at once, all its streams together (default 16 MiB):
         * its connection window (PROTOCOL.md "Flow control"), advertised to clients, which wait for the server's credit
         * rather than send past it. A message counts its bytes (at least 128) from its first frame until the handler takes
         * it. The window is raised to what the largest accepted message needs (the message limit plus the largest
         * attachment limit plus 8). A client that does not know connection windows (an HTTP/2 client, or an rdmarpc
         * client of an earlier release) and sends past it has the call that went over it failed with RESOURCE_EXHAUSTED.
         */
        public Builder connectionFlowControlWindow(int bytes) {
            if (bytes < 64 * 1024) {
                throw new IllegalArgumentException("connectionFlowControlWindow must be at least 64 KiB");
            }
            this.connectionFlowControlWindow = bytes;
            return this;
        }

        /** Time a new connection has to send HELLO (default 20 s); with TLS, also the time it has to complete the TLS handshake. */
        public Builder handshakeTimeout(Duration timeout) {
            this.handshakeTimeout = timeout;
            return this;
        }

        /**
         * Where methods not added with {@link #addService} are looked up, by full method name
         * (null means UNIMPLEMENTED); this is how grpc-compat serves grpc-java services.
         */
        public Builder fallbackMethods(java.util.function.Function<String, ServerMethodDefinition<?, ?>> lookup) {
            this.fallback = lookup;
            return this;
        }

        /**
         * Who is told when a client's connection is established and when it closes; the {@link PeerConnection}
         * it is given (also {@link ServerCall#getConnection()}) lets the server ping, drain or close that connection.
         */
        public Builder connectionListener(PeerConnectionListener listener) {
            this.connectionListener = listener;
            return this;
        }

        // ---- connection guards ----

        /**
         * How many control frames each client may send: PINGs, WINDOW on stream 0, empty MESSAGE continuations, and
         * frames for streams that have ended beyond two per stream. A client past {@code perSecond} sustained, after
         * a burst of {@code burst}, has its connection closed ("too many control frames: ..."); the server's other
         * connections carry on. Default 1,000/s with a burst of 10,000: far above what well-behaved clients send
         * (keepalive PINGs every few seconds at most, the odd late CANCEL), far below a PING flood.
         */
        public Builder controlFrameLimit(int perSecond, int burst) {
            if (perSecond <= 0 || burst <= 0) {
                throw new IllegalArgumentException("control frame rate and burst must be positive: " + perSecond + "/s, burst " + burst);
            }
            this.controlFramesPerSecond = perSecond;
            this.controlFrameBurst = burst;
            return this;
        }

        // ---- limits ----

        /**
         * Most calls one connection may have open at once (default 100, HTTP/2's recommended minimum and what common
         * servers use). The limit is advertised to clients in HELLO: rdmarpc clients (and grpc-compat's) queue calls
         * beyond it until one of the connection's calls ends. A client that ignores it has each call beyond the limit
         * answered at once with UNAVAILABLE "server refused the stream: too many concurrent streams on this
         * connection …"; no handler saw such a call, so it can be retried (grpc retries it transparently), and the
         * connection stays open.
         */
        public Builder maxConcurrentCallsPerConnection(int calls) {
            if (calls <= 0) {
                throw new IllegalArgumentException("maxConcurrentCallsPerConnection must be positive: " + calls);
            }
            this.maxConcurrentCallsPerConnection = calls;
            return this;
        }

        /**
         * Most client connections open at once (default 10,000: far above what one server process serves in
         * practice, below the open-file limits servers run with). Counted from accept (with TLS, from the end of
         * the TLS handshake), before HELLO: a connection over the limit is closed at once (the client sees the connection close before
         * HELLO: UNAVAILABLE), logged at WARNING and counted in the {@code rdmarpc.server.limit.refusals} meter with
         * tag {@code limit=connections}; connections already open are not affected.
         */
        public Builder maxConnections(int connections) {
            if (connections <= 0) {
                throw new IllegalArgumentException("maxConnections must be positive: " + connections);
            }
            this.maxConnections = connections;
            return this;
        }

        /**
         * Bytes of slab buffers in use (the server's {@link SlabPool#inUseBytes()}: requests being received or held,
         * responses being sent) above which new calls are refused (default 1 GiB: room for hundreds of calls with
         * messages at the default 4 MiB limit, while a burst of large messages is refused well before the process
         * runs out of native memory). Over the budget, each new call is answered at once with RESOURCE_EXHAUSTED
         * "server memory budget exhausted: …"; calls already running go on, and new calls are accepted again as soon as
         * memory is released. The pool measured is the server's: the process-wide shared one unless {@link #slabPool}
         * gives the server its own; with the shared pool, the buffers of everything else in the process that uses it
         * (channels included) count too.
         */
        public Builder memoryBudget(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("memoryBudget must be positive: " + bytes);
            }
            this.memoryBudget = bytes;
            return this;
        }

        /** The largest attachment any method accepts (the server's own limit or a method's), or -1 for none. */
        private int advertisedAttachmentLimit() {
            int max = maxInboundAttachmentSize;
            for (ServiceDefinition s : services) {
                for (ServerMethodDefinition<?, ?> m : s.getMethods()) {
                    max = Math.max(max, m.maxAttachmentBytes());
                }
            }
            return max;
        }

        /**
         * Whether the port also serves standard gRPC clients over HTTP/2 (default: true): cleartext HTTP/2 with prior
         * knowledge, told apart from rdmarpc clients by the first bytes, and under TLS by ALPN {@code h2}. They reach
         * the same services, interceptors and limits. With false, an HTTP/2 client is answered with UNAVAILABLE naming
         * the protocol mismatch, and TLS offers only {@code rdmarpc/1}.
         */
        public Builder grpcOverHttp2(boolean serve) {
            this.grpcOverHttp2 = serve;
            return this;
        }

        public RpcServer build() {
            ConnectionSettings settings = settings(true, maxConcurrentCallsPerConnection, advertisedAttachmentLimit());
            var transport = Transports.streamTransport().newServerTransport(
                    transportConfig(handshakeTimeout.toMillis(), grpcOverHttp2, WireProtocol.AUTO));
            List<ServerInterceptor> all = List.copyOf(interceptors);
            List<ServiceDefinition> intercepted = services.stream().map(s -> ServerInterceptors.intercept(s, all)).toList();
            java.util.function.Function<String, ServerMethodDefinition<?, ?>> base = fallback;
            java.util.function.Function<String, ServerMethodDefinition<?, ?>> lookup = base;
            if (base != null && !all.isEmpty()) {
                lookup = name -> {
                    ServerMethodDefinition<?, ?> m = base.apply(name);
                    return m == null ? null : ServerInterceptors.intercept(m, all);
                };
            }
            ServerImpl impl = new ServerImpl(address, intercepted, transport, settings, executorOrDefault(), meterRegistry(),
                    handshakeTimeout.toMillis());
            impl.setFallback(lookup);
            impl.setLimits(maxConnections, memoryBudget);
            impl.setConnectionWindow(connectionFlowControlWindow);
            impl.setAttachmentLimit(maxInboundAttachmentSize);
            impl.setConnectionListener(connectionListener);
            impl.setConnectionGuards(new ConnectionGuards(controlFramesPerSecond, controlFrameBurst, keepAliveTime().toNanos(),
                    keepAliveTimeout().toNanos()));
            return new RpcServer(impl);
        }
    }
}
