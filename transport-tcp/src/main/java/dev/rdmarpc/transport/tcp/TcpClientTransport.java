package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import dev.rdmarpc.core.spi.TransportConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Opens TCP connections to rdmarpc servers over Netty, on its own small group of I/O threads; with TLS configured,
 * a connection is handed to core only once its handshake completed. A connection to a standard gRPC server speaks gRPC
 * over HTTP/2 through an {@link H2ClientBridge}, as the config's {@link WireProtocol} and the server decide
 * ({@link ClientProtocol}).
 */
final class TcpClientTransport implements ClientTransport {
    /** I/O threads when the config says 0. */
    static final int DEFAULT_IO_THREADS = 1;

    private final IoFlavor flavor;
    private final EventLoopGroup group;
    private final Set<Channel> channels = ConcurrentHashMap.newKeySet();
    private final OpenConnections connections = new OpenConnections();
    /** TLS contexts when the config has TLS; null for plaintext. */
    private final TlsContexts tls;
    private final TlsConfig tlsConfig;
    private final WireProtocol wireProtocol;
    private final SlabPool pool;
    /** Addresses found to be gRPC-over-HTTP/2 servers (AUTO over cleartext). */
    private final Http2Servers http2Servers = new Http2Servers();
    private volatile boolean closed;

    /**
     * A transport with the config's I/O threads (0: one), native I/O choice and TLS; threads start on first connect.
     *
     * @throws IllegalArgumentException when the TLS key material or trust roots cannot be used
     */
    public TcpClientTransport(TransportConfig config) {
        this.tlsConfig = config.tls();
        this.wireProtocol = config.wireProtocol();
        this.pool = config.pool();
        this.tls = tlsConfig == null ? null : new TlsContexts(tlsConfig, wireProtocol);
        this.flavor = IoFlavor.select(config.nativeIo());
        this.group = flavor.newGroup(config.ioThreads() > 0 ? config.ioThreads() : DEFAULT_IO_THREADS);
    }

    @Override
    public CompletableFuture<FrameConnection> connect(InetSocketAddress address, FrameHandlerFactory handlers, int connectTimeoutMillis) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(handlers, "handlers");
        CompletableFuture<FrameConnection> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new IllegalStateException("the tcp client transport is closed"));
            return result;
        }
        Bootstrap b = SocketOptions.client(new Bootstrap(), connectTimeoutMillis)
                .group(group)
                .channel(flavor.socketChannel())
                .handler(tls == null
                        ? new TcpChannelHandler(handlers, result, connections, null,
                                new ClientProtocol(wireProtocol, http2Servers, address, pool, false))
                        : secureInitializer(address, handlers, result, connectTimeoutMillis));
        ChannelFuture f;
        try {
            f = b.connect(address);
        } catch (RuntimeException e) {
            // e.g. the group was shut down by a concurrent close
            result.completeExceptionally(e);
            return result;
        }
        Channel ch = f.channel();
        channels.add(ch);
        ch.closeFuture().addListener(x -> channels.remove(ch));
        f.addListener(x -> {
            if (!x.isSuccess()) {
                // The original exception: ConnectException "Connection refused: /host:port", ConnectTimeoutException …
                result.completeExceptionally(x.cause());
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                ch.close();
            }
        });
        if (closed) {
            ch.close();
        }
        return result;
    }

    /**
     * The pipeline of a TLS connection: the plaintext-server check, the SslHandler (SNI and hostname verification
     * with the dialled host or the configured override, the connect timeout as handshake timeout), then core.
     */
    private ChannelInitializer<Channel> secureInitializer(InetSocketAddress address, FrameHandlerFactory handlers,
                                                          CompletableFuture<FrameConnection> result, int connectTimeoutMillis) {
        SslContext context;
        try {
            context = tls.current();
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            throw e;
        }
        String host = tlsConfig.authorityOverride() != null ? tlsConfig.authorityOverride() : address.getHostString();
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                TlsHandshakeState state = new TlsHandshakeState();
                SslHandler ssl = context.newHandler(ch.alloc(), host, address.getPort());
                ssl.setHandshakeTimeoutMillis(connectTimeoutMillis > 0 ? connectTimeoutMillis : DEFAULT_HANDSHAKE_TIMEOUT_MILLIS);
                ch.pipeline().addLast(new PlaintextPeerDetector(state, false), ssl, new TcpChannelHandler(handlers, result,
                        connections, state, new ClientProtocol(wireProtocol, http2Servers, address, pool, true)));
            }
        };
    }

    /** TLS handshake timeout when the connect has none. */
    static final int DEFAULT_HANDSHAKE_TIMEOUT_MILLIS = 20_000;

    /** Which of epoll, io_uring or NIO this transport runs on. */
    String ioName() {
        return flavor.configName();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        connections.closeAll("client transport closed");
        for (Channel ch : channels) {
            ch.close();
        }
        EventLoops.shutdown(group);
    }
}
