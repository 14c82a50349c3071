package dev.rdmarpc.bench.driver;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * netty-raw's server: a length-prefixed echo straight on Netty, answering each frame from the
 * event loop and flushing once per read batch. Echoed bytes are written back without a copy.
 */
final class RawNettyServer implements BenchServer {
    private final EventLoopGroup group;
    private final Channel listener;

    private RawNettyServer(EventLoopGroup group, Channel listener) {
        this.group = group;
        this.listener = listener;
    }

    static RawNettyServer start(ServerSettings s) throws InterruptedException {
        EventLoopGroup group = RawIo.group(Runtime.getRuntime().availableProcessors(), "netty-raw-server");
        int maxFrame = s.maxMessage() + 16;
        Handler handler = new Handler(s.maxMessage());
        try {
            Channel ch = new ServerBootstrap()
                    .group(group)
                    .channel(RawIo.serverSocketChannel())
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new CopyingFrameDecoder(maxFrame), handler);
                        }
                    })
                    .bind(new InetSocketAddress(s.bindHost(), s.port())).sync().channel();
            return new RawNettyServer(group, ch);
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    @Override
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void close() {
        listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * Length-prefixed frames, each copied out of the read buffer: a retained slice (the decoder's
     * default) would pin the read buffer while a large echo waits to be written, and every later read
     * would then copy the whole buffer (quadratic with 1 MiB frames in flight).
     */
    private static final class CopyingFrameDecoder extends LengthFieldBasedFrameDecoder {
        CopyingFrameDecoder(int maxFrame) {
            super(maxFrame, 0, 4, 0, 4);
        }

        @Override
        protected ByteBuf extractFrame(ChannelHandlerContext ctx, ByteBuf buffer, int index, int length) {
            return ctx.alloc().directBuffer(length).writeBytes(buffer, index, length);
        }
    }

    /** Echoes ECHO frames, answers STREAM frames; stateless, so one instance serves every connection. */
    @ChannelHandler.Sharable
    private static final class Handler extends ChannelInboundHandlerAdapter {
        private final int maxMessage;
        private final ConcurrentHashMap<Integer, ByteBuf> payloads = new ConcurrentHashMap<>();

        Handler(int maxMessage) {
            this.maxMessage = maxMessage;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            byte op = frame.readByte();
            if (op == RawProtocol.ECHO) {
                ctx.write(ctx.alloc().directBuffer(RawProtocol.HEADER)
                        .writeInt(1 + frame.readableBytes()).writeByte(RawProtocol.ECHO));
                ctx.write(frame);
                return;
            }
            try {
                if (op != RawProtocol.STREAM || frame.readableBytes() != 8) {
                    ctx.close();
                    return;
                }
                int count = frame.readInt();
                int size = frame.readInt();
                if (Payloads.checkStreamRequest(size, count, maxMessage) != null) {
                    ctx.close();
                    return;
                }
                ByteBuf payload = payloads.computeIfAbsent(size, n -> Unpooled.unreleasableBuffer(
                        Unpooled.directBuffer(n).writeBytes(Payloads.bytes(n)).asReadOnly()));
                for (int i = 0; i < count; i++) {
                    ctx.write(ctx.alloc().directBuffer(RawProtocol.HEADER).writeInt(1 + size).writeByte(RawProtocol.DATA));
                    ctx.write(payload.duplicate());
                }
                ctx.write(ctx.alloc().directBuffer(RawProtocol.HEADER).writeInt(1).writeByte(RawProtocol.END));
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
