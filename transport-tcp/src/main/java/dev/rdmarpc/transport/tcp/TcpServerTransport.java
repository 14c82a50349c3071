package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import dev.rdmarpc.core.spi.ServerTransport;
import dev.rdmarpc.core.spi.TransportConfig;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslHandler;

import java.io.IOException;
import java.net.BindException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Listens on one TCP address over Netty and serves every accepted connection on its own I/O threads; with TLS
 * configured, a connection reaches core only once its handshake completed (within the handshake timeout). Unless the
 * config says otherwise, gRPC-over-HTTP/2 clients are served on the same port (see {@link H2Bridge}).
 */
final class TcpServerTransport implements ServerTransport {
    /** I/O threads when the config says 0 (the listening socket shares them). */
    static final int DEFAULT_IO_THREADS = Math.min(2, Runtime.getRuntime().availableProcessors());

    private final IoFlavor flavor;
    private final int ioThreads;
    private final OpenConnections connections = new OpenConnections();
    /** TLS contexts when the config has TLS; null for plaintext. */
    private final TlsContexts tls;
    private final long handshakeTimeoutMillis;
    /** Where connections take buffers (large frames received, and an {@link H2Bridge}'s). */
    private final SlabPool pool;
    /** Whether gRPC-over-HTTP/2 clients are served (else refused). */
    private final boolean http2;
    private EventLoopGroup group;
    private Channel listener;
    private boolean closed;

    /**
     * A transport with the config's I/O threads (0: up to two), native I/O choice and TLS; nothing starts before
     * {@link #bind}.
     *
     * @throws IllegalArgumentException when the TLS key material or trust roots cannot be used
     */
    public TcpServerTransport(TransportConfig config) {
        this.tls = config.tls() == null ? null : new TlsContexts(config.tls(), config.grpcOverHttp2());
        this.pool = config.pool();
        this.http2 = config.grpcOverHttp2();
        this.handshakeTimeoutMillis = config.handshakeTimeoutMillis() > 0 ? config.handshakeTimeoutMillis()
                : TcpClientTransport.DEFAULT_HANDSHAKE_TIMEOUT_MILLIS;
        this.flavor = IoFlavor.select(config.nativeIo());
        this.ioThreads = config.ioThreads() > 0 ? config.ioThreads() : DEFAULT_IO_THREADS;
    }

    @Override
    public synchronized InetSocketAddress bind(InetSocketAddress address, FrameHandlerFactory handlers) throws IOException {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(handlers, "handlers");
        if (closed) {
            throw new IllegalStateException("the tcp server transport is closed");
        }
        if (listener != null) {
            throw new IllegalStateException("already listening on " + describe((InetSocketAddress) listener.localAddress()));
        }
        EventLoopGroup g = flavor.newGroup(ioThreads);
        ServerBootstrap b = SocketOptions.server(new ServerBootstrap())
                .group(g)
                .channel(flavor.serverSocketChannel())
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (tls == null) {
                            ch.pipeline().addLast(new TcpChannelHandler(handlers, null, connections, null, pool, http2));
                            return;
                        }
                        // The handshake timeout closes a peer that stalls (sends nothing, or half a ClientHello).
                        TlsHandshakeState state = new TlsHandshakeState();
                        SslHandler ssl = tls.current().newHandler(ch.alloc());
                        ssl.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
                        ch.pipeline().addLast(new PlaintextPeerDetector(state, true), ssl,
                                new TcpChannelHandler(handlers, null, connections, state, pool, http2));
                    }
                });
        ChannelFuture f;
        try {
            f = b.bind(address).awaitUninterruptibly();
        } catch (RuntimeException e) {
            EventLoops.shutdown(g);
            throw bindFailure(address, e);
        }
        if (!f.isSuccess()) {
            f.channel().close().awaitUninterruptibly();
            EventLoops.shutdown(g);
            throw bindFailure(address, f.cause());
        }
        group = g;
        listener = f.channel();
        return (InetSocketAddress) listener.localAddress();
    }

    /** An IOException saying which address and port could not be bound, and why. */
    static IOException bindFailure(InetSocketAddress address, Throwable cause) {
        String where = describe(address);
        String message;
        if (isAddressInUse(cause)) {
            message = "cannot listen on " + where + ": port " + address.getPort() + " is already in use";
        } else if (address.isUnresolved()) {
            message = "cannot listen on " + where + ": the host name does not resolve";
        } else {
            message = "cannot listen on " + where + ": " + (cause.getMessage() != null ? cause.getMessage() : cause.toString());
        }
        BindException e = new BindException(message);
        e.initCause(cause);
        return e;
    }

    private static boolean isAddressInUse(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            // NIO throws BindException; epoll and io_uring a NativeIoException, both with the OS's text.
            String m = t.getMessage();
            if (m != null && m.contains("Address already in use")) {
                return true;
            }
        }
        return false;
    }

    /** host:port, with brackets around an IPv6 literal. */
    static String describe(InetSocketAddress a) {
        String host = a.isUnresolved() ? a.getHostString()
                : a.getAddress() instanceof Inet6Address ? "[" + a.getAddress().getHostAddress() + "]" : a.getAddress().getHostAddress();
        return host + ":" + a.getPort();
    }

    @Override
    public void stopAccepting() {
        Channel l;
        synchronized (this) {
            l = listener;
        }
        if (l != null && l.isOpen()) {
            ChannelFuture f = l.close();
            if (!l.eventLoop().inEventLoop()) {
                f.awaitUninterruptibly(EventLoops.SHUTDOWN_WAIT_MILLIS);
            }
        }
    }

    /** Which of epoll, io_uring or NIO this transport runs on. */
    String ioName() {
        return flavor.configName();
    }

    /** Connections open now. */
    int openConnections() {
        return connections.size();
    }

    @Override
    public void close() {
        EventLoopGroup g;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            g = group;
        }
        stopAccepting();
        connections.closeAll("server transport closed");
        if (g != null) {
            EventLoops.shutdown(g);
        }
    }
}
