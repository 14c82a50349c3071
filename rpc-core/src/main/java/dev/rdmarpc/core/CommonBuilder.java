package dev.rdmarpc.core;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.spi.TransportConfig;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The options {@link RpcChannel.Builder} and {@link RpcServer.Builder} share, kept and checked in one place: where
 * callbacks run, inbound limits, the stream window, transport, TLS, RDMA device, buffers, meters and keepalive.
 *
 * @param <B> the builder, returned by every setter for chaining
 */
abstract class CommonBuilder<B extends CommonBuilder<B>> {
    private Executor executor;
    private int maxInboundMessageSize = ConnectionSettings.DEFAULT_MAX_MESSAGE_SIZE;
    private int maxInboundMetadataSize = ConnectionSettings.DEFAULT_MAX_METADATA_BYTES;
    private int flowControlWindow = ConnectionSettings.DEFAULT_WINDOW;
    private TransportMode transportMode = TransportMode.AUTO;
    private SlabPool pool = SlabPool.shared();
    private int ioThreads;
    private Object meterRegistry;
    private TlsConfig tls;
    private RdmaUnderTls rdmaUnderTls = RdmaUnderTls.NEVER;
    private RdmaDeviceChoice rdmaDevice;
    private Duration keepAliveTime;
    private Duration keepAliveTimeout;

    CommonBuilder(Duration keepAliveTime, Duration keepAliveTimeout) {
        this.keepAliveTime = keepAliveTime;
        this.keepAliveTimeout = keepAliveTimeout;
    }

    /** This builder, as its own type. */
    abstract B self();

    /**
     * Where the calls' callbacks (a server's handlers) run. Default: off the I/O threads, on a worker per I/O thread
     * that drains the calls ready in a burst (one wake-up per burst); a callback may block (a blocking stub, a
     * {@code sendMessage} waiting for flow-control room): when it holds up the calls queued behind it for a
     * millisecond, a virtual thread takes them over. Any executor is safe: a call's callbacks run one at a time and
     * never under a lock of rdmarpc's.
     */
    public B executor(Executor e) {
        this.executor = e;
        return self();
    }

    /**
     * Runs callbacks (a server's handlers) on the transport's I/O threads: lowest latency; they must not block, and a
     * streaming handler should send only while {@code isReady()} (what it queues beyond that is not bounded, since an
     * I/O thread cannot wait for flow-control room).
     */
    public B directExecutor() {
        this.executor = RpcExecutors.direct();
        return self();
    }

    /**
     * Largest inbound message accepted, a channel's responses or a server's requests (default 4 MiB); a larger one
     * fails its call with RESOURCE_EXHAUSTED.
     */
    public B maxInboundMessageSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMessageSize must be positive");
        }
        this.maxInboundMessageSize = bytes;
        return self();
    }

    /**
     * Most metadata bytes an inbound HEADERS or TRAILERS may carry (default 8 KiB, as grpc-java's
     * {@code maxInboundMetadataSize}), counted as each entry's key and value bytes plus 32, as HTTP/2 counts header
     * fields, and advertised to the peer in HELLO. Decoding stops at the limit; the connection stays open.
     *
     * <p>On a server, a call that arrives with more is refused with RESOURCE_EXHAUSTED "Header size exceeded max
     * allowed size (N) …" before any handler sees it; rdmarpc clients fail a call with larger metadata locally, with
     * RESOURCE_EXHAUSTED, without sending it. On a channel, larger response HEADERS fail the call with that status and
     * cancel it on the server; larger TRAILERS end it with that status instead of the server's. The channel also
     * respects the limits the server advertises: a request whose metadata is over the server's metadata limit fails at
     * once with RESOURCE_EXHAUSTED and is not sent, and calls beyond the server's concurrent-call limit on the
     * connection wait (their deadlines and cancellation still apply) until one of its calls ends.
     */
    public B maxInboundMetadataSize(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("maxInboundMetadataSize must be positive: " + bytes);
        }
        this.maxInboundMetadataSize = bytes;
        return self();
    }

    /** Per-stream receive window in bytes (default 2 MiB). */
    public B flowControlWindow(int bytes) {
        if (bytes < 64 * 1024) {
            throw new IllegalArgumentException("flowControlWindow must be at least 64 KiB");
        }
        this.flowControlWindow = bytes;
        return self();
    }

    /** AUTO (default): RDMA with peers that can, TCP with the rest; or force one. */
    public B transportMode(TransportMode mode) {
        this.transportMode = Objects.requireNonNull(mode);
        return self();
    }

    /** Slab pool for the buffers of this channel or server (default: the shared pool). */
    public B slabPool(SlabPool p) {
        this.pool = Objects.requireNonNull(p);
        return self();
    }

    /** Records call metrics on this Micrometer {@code MeterRegistry}. */
    public B meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meterRegistry = registry;
        return self();
    }

    /** I/O threads of the transport (default: the transport's choice). */
    public B ioThreads(int n) {
        this.ioThreads = n;
        return self();
    }

    /**
     * Protects every connection with TLS (default: plaintext). TLS wraps the TCP connection before the HELLO exchange,
     * so the HELLO and any RDMA parameters in it are protected. A channel's server must speak TLS; its certificate is
     * verified against the config's trust roots and, unless turned off, must name the host dialled. A server's clients
     * must speak TLS; plaintext clients are refused.
     */
    public B tls(TlsConfig config) {
        this.tls = config;
        return self();
    }

    /**
     * Whether a TLS connection may move to RDMA (ignored without TLS). {@link RdmaUnderTls#NEVER} (the default) keeps
     * it on the encrypted TCP path; {@link RdmaUnderTls#AUTHENTICATE_ONLY} lets it upgrade with an authenticated peer,
     * after which the calls' bytes cross the RDMA fabric unencrypted. A server upgrades a client only when it presented
     * a certificate the server verified (client auth OPTIONAL or REQUIRE); one without stays on TLS over TCP (counted as
     * {@code rdmarpc.server.upgrades.refused}).
     */
    public B rdmaUnderTls(RdmaUnderTls choice) {
        this.rdmaUnderTls = Objects.requireNonNull(choice);
        return self();
    }

    /**
     * The RDMA device, port and GID the connections use (default: chosen per connection from its local address, then
     * the {@code rdmarpc.rdma.*} system properties); ignored without the RDMA transport.
     */
    public B rdmaDevice(RdmaDeviceChoice choice) {
        this.rdmaDevice = Objects.requireNonNull(choice);
        return self();
    }

    /**
     * PING the peer after this long without receiving anything from it; with no answer (any frame) within
     * {@link #keepAliveTimeout} the connection is closed and its calls fail (a channel's with UNAVAILABLE; its next
     * call opens a new connection). {@link Duration#ZERO} turns it off. A channel's is off by default, as in
     * grpc-java, and pings whether or not calls are open; a server's is 2 minutes by default, closing connections to
     * clients that have vanished or stopped reading (a client that answers PINGs keeps an idle connection open).
     */
    public B keepAliveTime(Duration time) {
        if (time.isNegative()) {
            throw new IllegalArgumentException("keepAliveTime must not be negative: " + time);
        }
        this.keepAliveTime = time;
        return self();
    }

    /** How long a keepalive PING waits for an answer (any frame) before the connection is closed (default 20 s). */
    public B keepAliveTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("keepAliveTimeout must be positive: " + timeout);
        }
        this.keepAliveTimeout = timeout;
        return self();
    }

    // ---- for build() ----

    /** The executor set, or the shared default. */
    final Executor executorOrDefault() {
        return executor != null ? executor : RpcExecutors.defaultCallbackExecutor();
    }

    /** What every connection of this side advertises and enforces. */
    final ConnectionSettings settings(boolean server, int maxConcurrentStreams, int maxAttachmentBytes) {
        return new ConnectionSettings(pool, flowControlWindow, ConnectionSettings.DEFAULT_MAX_FRAME_PAYLOAD,
                maxInboundMessageSize, transportMode, UpgradePolicy.upgraders(transportMode, tls, rdmaUnderTls, server,
                        rdmaDevice),
                maxConcurrentStreams, maxInboundMetadataSize, maxAttachmentBytes);
    }

    /** The transport's configuration. */
    final TransportConfig transportConfig(long handshakeTimeoutMillis, boolean grpcOverHttp2, WireProtocol wireProtocol) {
        return new TransportConfig(pool, ioThreads, System.getProperty("rdmarpc.io", "auto"), tls, handshakeTimeoutMillis,
                grpcOverHttp2, wireProtocol);
    }

    final Object meterRegistry() {
        return meterRegistry;
    }

    final Duration keepAliveTime() {
        return keepAliveTime;
    }

    final Duration keepAliveTimeout() {
        return keepAliveTimeout;
    }
}
