package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import dev.rdmarpc.core.spi.ProtocolSwitchException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.ReferenceCountUtil;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSession;

/**
 * The last handler in a connection's pipeline: binds core's {@link FrameHandler} when the channel
 * becomes active (with TLS: when the handshake has completed and agreed on ALPN {@code rdmarpc/1}, or {@code h2} where
 * HTTP/2 is spoken, so core never sees a byte of an unauthenticated peer; on a client speaking gRPC over HTTP/2 behind
 * an {@link H2ClientBridge} it adds first), feeds reads to the {@link FrameDecoder}, ends read bursts with one flush, and
 * turns writability changes, errors and the channel's close into {@link TcpFrameConnection} events.
 */
final class TcpChannelHandler extends ChannelInboundHandlerAdapter {
    private final FrameHandlerFactory handlers;
    /** Completed with the connection once bound (client side); null on the server. */
    private final CompletableFuture<FrameConnection> connected;
    /** The transport's open connections, so that closing the transport closes them. */
    private final OpenConnections open;
    private TcpFrameConnection connection;
    private FrameDecoder decoder;
    /** Set when a gRPC/HTTP2 client dialled this server that does not serve them: it answers instead of the decoder. */
    private Http2Refusal http2;
    /** Where a server's {@link H2Bridge} takes buffers; null when HTTP/2 clients are refused (and on clients). */
    private final SlabPool http2Pool;
    /** Where the decoder receives large frames; null to keep them in its cumulation. */
    private final SlabPool pool;
    /** On a client: which protocol the connection speaks; null on a server. */
    private final ClientProtocol client;
    private boolean firstRead = true;
    /** Set on TLS connections: what the first bytes said; null for plaintext. */
    private final TlsHandshakeState tls;
    /** TLS: the handshake ended (bound or failed). */
    private boolean handshakeEnded;
    /** TLS: the first error seen before the handshake ended, in case the handshake reports only the close after it. */
    private Throwable earlyTlsError;

    TcpChannelHandler(FrameHandlerFactory handlers, CompletableFuture<FrameConnection> connected, OpenConnections open) {
        this(handlers, connected, open, null, null, false);
    }

    /**
     * A handler behind an {@code SslHandler} when {@code tls} is not null: it binds core once the handshake completed.
     * Large frames are received into buffers of {@code pool} (null: into the decoder's cumulation). A server handler
     * serves gRPC-over-HTTP/2 clients (with buffers from {@code pool}) when {@code http2} is set.
     */
    TcpChannelHandler(FrameHandlerFactory handlers, CompletableFuture<FrameConnection> connected, OpenConnections open,
                      TlsHandshakeState tls, SlabPool pool, boolean http2) {
        this(handlers, connected, open, tls, pool, http2 ? pool : null, null);
    }

    /** A client's handler (behind an {@code SslHandler} when {@code tls} is not null) for a connection speaking {@code client}. */
    TcpChannelHandler(FrameHandlerFactory handlers, CompletableFuture<FrameConnection> connected, OpenConnections open,
                      TlsHandshakeState tls, ClientProtocol client) {
        this(handlers, connected, open, tls, client.pool(), null, client);
    }

    private TcpChannelHandler(FrameHandlerFactory handlers, CompletableFuture<FrameConnection> connected, OpenConnections open,
                              TlsHandshakeState tls, SlabPool pool, SlabPool http2Pool, ClientProtocol client) {
        this.handlers = handlers;
        this.connected = connected;
        this.open = open;
        this.tls = tls;
        this.pool = pool;
        this.http2Pool = http2Pool;
        this.client = client;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (tls != null) {
            ctx.fireChannelActive(); // core is bound when the handshake completes
            return;
        }
        bind(ctx, null, client != null && client.h2FromStart());
        ctx.fireChannelActive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (tls != null && evt instanceof SslHandshakeCompletionEvent done && !handshakeEnded) {
            if (done.isSuccess()) {
                SslHandler ssl = ctx.pipeline().get(SslHandler.class);
                String alpn = ssl.applicationProtocol();
                if (client != null ? client.accepts(alpn)
                        : TlsConfig.ALPN_PROTOCOL.equals(alpn) || http2Pool != null && TlsContexts.ALPN_H2.equals(alpn)) {
                    handshakeEnded = true;
                    bind(ctx, ssl.engine().getSession(), client != null && ClientProtocol.isH2(alpn));
                } else if (client != null) {
                    handshakeFailed(ctx, "the peer did not agree to the ALPN protocol " + client.expectedAlpn()
                            + (alpn == null ? " (none was agreed)" : " (it chose " + alpn + ")"), null);
                } else {
                    handshakeFailed(ctx, "the peer did not agree to the ALPN protocol " + TlsConfig.ALPN_PROTOCOL
                            + (alpn == null ? " (none was agreed)" : " (it chose " + alpn + ")") + ": it does not speak rdmarpc over TLS", null);
                }
            } else {
                handshakeFailed(ctx, null, done.cause());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** Fails the connect (client) or logs the refusal (server), once, and closes. */
    private void handshakeFailed(ChannelHandlerContext ctx, String reason, Throwable cause) {
        if (handshakeEnded) {
            return;
        }
        handshakeEnded = true;
        Throwable c = (cause == null || cause instanceof ClosedChannelException) && earlyTlsError != null ? earlyTlsError : cause;
        boolean client = connected != null;
        String why;
        if (reason != null) {
            why = reason;
        } else if (tls.plaintextPeer != null) {
            why = tls.plaintextPeer;
        } else if (client && !tls.bytesReceived && !(c instanceof SslHandshakeTimeoutException)) {
            why = "the server closed the connection without answering the TLS ClientHello (a server without TLS does so)";
        } else {
            why = c == null ? "the connection closed during the TLS handshake" : TlsFailures.describe(c, client);
        }
        String message = "TLS handshake with " + peer(ctx) + " failed: " + why;
        if (client) {
            SSLHandshakeException e = new SSLHandshakeException(message);
            if (c != null) {
                e.initCause(c);
            }
            connected.completeExceptionally(e);
        } else if (!tls.bytesReceived && c instanceof ClosedChannelException) {
            TcpFrameConnection.LOG.log(Level.DEBUG, "connection from {0} closed before it sent anything", peer(ctx));
        } else {
            TcpFrameConnection.LOG.log(Level.WARNING, "closing connection: {0}", message);
        }
        ctx.close();
    }

    private static String peer(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress() instanceof java.net.InetSocketAddress a ? TcpServerTransport.describe(a)
                : String.valueOf(ctx.channel().remoteAddress());
    }

    private void bind(ChannelHandlerContext ctx, SSLSession session, boolean h2) {
        TcpFrameConnection c = new TcpFrameConnection(ctx.channel(), connected == null);
        c.secure(session);
        if (h2) {
            client.addH2(ctx, c, session != null);
        }
        FrameHandler h;
        try {
            h = handlers.newHandler(c);
            if (h == null) {
                throw new NullPointerException("the frame handler factory returned null");
            }
        } catch (Throwable t) {
            TcpFrameConnection.LOG.log(Level.WARNING, "closing connection with " + c.remoteAddress() + ": no frame handler", t);
            if (connected != null) {
                connected.completeExceptionally(t);
            }
            ctx.close();
            return;
        }
        c.bind(h);
        connection = c;
        decoder = new FrameDecoder(c, pool);
        c.attachDecoder(decoder);
        if (connected != null && !connected.complete(c)) {
            c.close("connect was cancelled");
        }
        open.add(c);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        TcpFrameConnection c = connection;
        if (c == null || c.isClosing() || !(msg instanceof ByteBuf in)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (http2 != null) {
            http2.read(in);
            return;
        }
        if (client != null) {
            ProtocolSwitchException other = client.check(in);
            if (other != null) {
                in.release();
                c.closeToSwitchProtocol(other);
                return;
            }
        }
        if (firstRead) {
            firstRead = false;
            if (connected == null && http2Pool != null && Http2Refusal.looksLikePreface(in)) {
                c.servesHttp2();
                c.flushBurstsByBytes();
                H2Bridge bridge = new H2Bridge(c, http2Pool);
                ctx.pipeline().addBefore(ctx.name(), H2Bridge.NAME, bridge);
                bridge.start(in);
                return;
            }
            if (connected == null && Http2Refusal.looksLikePreface(in)) {
                http2 = new Http2Refusal(ctx, c);
                http2.read(in);
                return;
            }
            if (tls == null && TlsRecords.looksLikeTls(in)) {
                in.release();
                c.closeOnError(new ProtocolException(connected == null
                        ? "the client started a TLS handshake, but this server does not use TLS (configure both sides alike)"
                        : "the server answered with TLS: it requires a TLS connection (set tls(TlsConfig) on the channel)"));
                return;
            }
        }
        c.beginReadBurst();
        try {
            decoder.decode(ctx.alloc(), in, c.handler());
        } catch (Throwable t) {
            c.closeOnError(t);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        TcpFrameConnection c = connection;
        if (c != null) {
            c.endReadBurst();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        TcpFrameConnection c = connection;
        if (c != null) {
            c.writabilityChanged();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        TcpFrameConnection c = connection;
        if (cause instanceof ClosedChannelException) {
            return; // a write raced with the close; the buffer was released and the close is reported already
        }
        if (c != null) {
            c.closeOnIoError(tls != null && isTls(cause) ? new SSLException("TLS error: " + TlsFailures.describe(cause, connected != null), cause) : cause);
        } else if (tls != null && !handshakeEnded) {
            if (earlyTlsError == null) {
                earlyTlsError = cause;
            }
            TcpFrameConnection.LOG.log(Level.DEBUG, "TLS error on {0} during the handshake: {1}", ctx.channel(), cause.toString());
            ctx.close();
        } else {
            TcpFrameConnection.LOG.log(Level.DEBUG, "I/O error on {0}: {1}", ctx.channel(), cause.toString());
            ctx.close();
        }
    }

    private static boolean isTls(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause() == x ? null : x.getCause()) {
            if (x instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (tls != null && connection == null) {
            handshakeFailed(ctx, null, new ClosedChannelException());
        }
        TcpFrameConnection c = connection;
        if (c != null) {
            c.endReadBurst(); // a read cut short by the close still ends its burst (nothing if none is open)
            String truncation = decoder.truncation();
            decoder.release();
            open.remove(c);
            c.channelClosed(truncation);
        }
        ctx.fireChannelInactive();
    }
}
