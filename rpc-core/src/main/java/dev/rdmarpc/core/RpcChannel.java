package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientLiveness;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.connection.Transports;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A client channel to one server ({@code host:port}). It connects on first use, over RDMA when
 * both sides can and TCP otherwise, and reconnects when its connection is lost. Thread-safe;
 * make one per server and share it.
 */
public final class RpcChannel extends ChannelHandle implements AutoCloseable {
    private RpcChannel(ChannelImpl impl) {
        super(impl);
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

    /** Builds an {@link RpcChannel}; the options it shares with {@link RpcServer.Builder} are {@link CommonBuilder}'s. */
    public static final class Builder extends CommonBuilder<Builder> {
        private final String host;
        private final int port;
        private Duration defaultTimeout;
        private int maxInboundAttachmentSize = ConnectionSettings.DEFAULT_MAX_ATTACHMENT_BYTES;
        private WireProtocol wireProtocol = WireProtocol.AUTO;
        private Duration connectTimeout = Duration.ofSeconds(20);
        private Duration backoffInitial = Duration.ofNanos(ClientLiveness.CHANNEL_DEFAULTS.backoffInitialNanos());
        private Duration backoffMax = Duration.ofNanos(ClientLiveness.CHANNEL_DEFAULTS.backoffMaxNanos());

        private Builder(String host, int port) {
            super(Duration.ZERO, Duration.ofSeconds(20));
            this.host = Objects.requireNonNull(host, "host");
            this.port = port;
        }

        @Override
        Builder self() {
            return this;
        }

        /** Deadline applied to calls that have none (or an earlier one than theirs). */
        public Builder defaultDeadline(Duration timeout) {
            this.defaultTimeout = timeout;
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

        public RpcChannel build() {
            return new RpcChannel(newImpl(new ClientLiveness(keepAliveTime().toNanos(), keepAliveTimeout().toNanos(),
                    backoffInitial.toNanos(), backoffMax.toNanos())));
        }

        /**
         * Builds a single connection to the target instead of a channel: for code that manages its
         * connections itself (a transport layered on rdmarpc, such as grpc-compat). It has the keepalive set here but
         * no reconnect backoff: its owner decides when to connect again.
         */
        public RpcConnection buildConnection() {
            return new RpcConnection(newImpl(new ClientLiveness(keepAliveTime().toNanos(), keepAliveTimeout().toNanos(), 0, 0)));
        }

        private ChannelImpl newImpl(ClientLiveness liveness) {
            ConnectionSettings settings = settings(false, 0, maxInboundAttachmentSize);
            var transport = Transports.streamTransport().newClientTransport(transportConfig(0, false, wireProtocol));
            return new ChannelImpl(host, port, transport, settings, executorOrDefault(), defaultTimeout,
                    (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()), meterRegistry(), liveness);
        }
    }
}
