package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * First in a TLS connection's pipeline, before the {@code SslHandler}: looks at the peer's first bytes once. A
 * server answers a plaintext client (an rdmarpc HELLO, an HTTP/2 preface, …) with a fatal TLS alert sent in
 * clear and closes, so that the client learns it must use TLS; a client notes what a plaintext server sent. Either
 * way the reason reaches {@link TcpChannelHandler} through {@link TlsHandshakeState}. Then it leaves the pipeline.
 */
final class PlaintextPeerDetector extends ChannelInboundHandlerAdapter {
    private final TlsHandshakeState state;
    private final boolean server;

    PlaintextPeerDetector(TlsHandshakeState state, boolean server) {
        this.state = state;
        this.server = server;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in) || !in.isReadable()) {
            ctx.fireChannelRead(msg);
            return;
        }
        state.bytesReceived = true;
        if (!TlsRecords.certainlyPlaintext(in)) {
            ctx.pipeline().remove(this); // a TLS record: the SslHandler takes it from here
            ctx.fireChannelRead(in);
            return;
        }
        state.plaintextPeer = (server ? "the client sent " : "the server answered with ") + TlsRecords.describePlaintext(in, server)
                + (server ? ": this server requires TLS" : ": it does not use TLS");
        ctx.pipeline().remove(this);
        if (server) {
            in.release();
            ctx.writeAndFlush(Unpooled.wrappedBuffer(TlsRecords.fatalAlert())).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.fireChannelRead(in); // the SslHandler fails the handshake; TcpChannelHandler reports the reason noted here
        }
    }
}
