package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;

/**
 * The one handler in a connection's pipeline: binds core's {@link FrameHandler} when the channel
 * becomes active, feeds reads to the {@link FrameDecoder}, ends read bursts with one flush, and
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
    /** Set when a gRPC/HTTP2 client dialled this server: it answers instead of the decoder. */
    private Http2Refusal http2;
    private boolean firstRead = true;

    TcpChannelHandler(FrameHandlerFactory handlers, CompletableFuture<FrameConnection> connected, OpenConnections open) {
        this.handlers = handlers;
        this.connected = connected;
        this.open = open;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        TcpFrameConnection c = new TcpFrameConnection(ctx.channel());
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
        decoder = new FrameDecoder(c);
        if (connected != null && !connected.complete(c)) {
            c.close("connect was cancelled");
        }
        open.add(c);
        ctx.fireChannelActive();
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
        if (firstRead) {
            firstRead = false;
            if (connected == null && Http2Refusal.looksLikePreface(in)) {
                http2 = new Http2Refusal(ctx, c);
                http2.read(in);
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
            c.closeOnIoError(cause);
        } else {
            TcpFrameConnection.LOG.log(Level.DEBUG, "I/O error on {0}: {1}", ctx.channel(), cause.toString());
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        TcpFrameConnection c = connection;
        if (c != null) {
            String truncation = decoder.truncation();
            decoder.release();
            open.remove(c);
            c.channelClosed(truncation);
        }
        ctx.fireChannelInactive();
    }
}
