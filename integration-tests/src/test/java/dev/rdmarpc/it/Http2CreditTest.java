package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.WireProtocol;
import dev.rdmarpc.core.buffer.SlabPool;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The HTTP/2 bridges give back each received byte's flow-control credit exactly once. Netty's codec takes a returned
 * credit from the connection's count of unconsumed bytes before it checks the stream's, and rejects a return larger
 * than the stream's: a byte returned twice loses that whole credit (the sender's window never reopens by it) and
 * leaves the connection's count short, which Netty logs at SEVERE ("Attempting to return too many bytes for stream
 * 0") when a stream closes. Each case ends with one more call on the same connection, whose answer means the I/O
 * thread has closed every earlier stream.
 */
class Http2CreditTest {
    private static final int BIG = 2 << 20;
    private long baseline;
    private Http2ErrorLog errors;

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @BeforeEach
    void start() {
        baseline = SlabPool.shared().inUseBuffers();
        errors = new Http2ErrorLog();
    }

    @AfterEach
    void stop() throws Exception {
        errors.close();
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    /**
     * A service run on the I/O thread answers inside the bridge's hand-over of the request's message, so the stream
     * ends there; its credit is still returned once.
     */
    @Test
    void aServiceThatAnswersAtOnceOnTheServersHttp2Side() throws Exception {
        RpcServer server = RpcServer.forPort(0).addService(new TestService().definition()).directExecutor().build().start();
        ManagedChannel stock = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
        try {
            for (int i = 0; i < 50; i++) {
                byte[] request = Bytes.pattern(1000 + i, i);
                assertArrayEquals(request, StockGrpc.echo(stock, request));
            }
            int n = 0;
            for (Iterator<byte[]> it = StockGrpc.stream(stock, 20, 1000); it.hasNext(); n++) {
                assertArrayEquals(Bytes.pattern(1000, n), it.next());
            }
            assertEquals(20, n);
            assertArrayEquals(new byte[3], StockGrpc.echo(stock, new byte[3]));
            assertEquals(List.of(), errors.records());
        } finally {
            stock.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    /**
     * A server that sends each message's 5-byte gRPC prefix in a DATA frame of its own (HTTP/2 lets a sender cut DATA
     * anywhere; a flow-control window that ends inside a prefix does it too): core counts the prefix's length bytes in
     * the message's first frame, so the client bridge must not return them too.
     */
    @Test
    void aMessagePrefixInADataFrameOfItsOwnOnTheClientsSide() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Channel listener = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(Http2FrameCodecBuilder.forServer().build(), new SplitPrefixAnswers());
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        int port = ((InetSocketAddress) listener.localAddress()).getPort();
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", port).wireProtocol(WireProtocol.GRPC).build();
        try {
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(Bytes.pattern(BIG, 1), ClientCalls.blockingUnaryCall(channel, TestService.ECHO, options(), new byte[3]));
            }
            assertEquals(List.of(), errors.records());
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            listener.close().sync();
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    /** Answers every request, once it has ended, with one message of {@link #BIG} bytes whose prefix goes alone. */
    private static final class SplitPrefixAnswers extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                boolean ended = msg instanceof Http2HeadersFrame h ? h.isEndStream() : msg instanceof Http2DataFrame d && d.isEndStream();
                if (!ended) {
                    return;
                }
                var stream = msg instanceof Http2HeadersFrame h ? h.stream() : ((Http2DataFrame) msg).stream();
                ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200").set("content-type", "application/grpc")).stream(stream));
                // flushed alone: DATA written together waits in Netty's flow controller as one, and leaves in frames cut
                // by size
                ctx.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.buffer(5).writeByte(0).writeInt(BIG)).stream(stream));
                ctx.write(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(Bytes.pattern(BIG, 1))).stream(stream));
                ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().set("grpc-status", "0"), true).stream(stream));
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
    }
}
