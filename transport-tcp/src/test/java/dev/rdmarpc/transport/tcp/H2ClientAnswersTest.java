package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.WireProtocol;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An {@link RpcChannel} speaking gRPC over HTTP/2 to an HTTP/2 server (Netty's codec, answering by the path) that
 * answers as gRPC servers and proxies may: HTTP errors without {@code grpc-status}, a content type that is not gRPC,
 * trailers-only answers, a response without trailers, RST_STREAM codes and GOAWAY. Each ends its call with the status
 * gRPC's spec (or grpc-java) gives it; the connection carries on where it can, and no buffer leaks.
 */
@ExtendWith(LeakCheck.class)
class H2ClientAnswersTest {
    private static final Marshaller<byte[]> BYTES = new Marshaller<>() {
        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target) {
            MemorySegment.copy(value, 0, target, ValueLayout.JAVA_BYTE, 0, value.length);
        }

        @Override
        public byte[] parse(MemorySegment source) {
            return source.toArray(ValueLayout.JAVA_BYTE);
        }
    };
    /** A bound for a hung call only: every call here ends long before. */
    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    private final AtomicInteger connections = new AtomicInteger();
    private EventLoopGroup group;
    private Channel listener;
    private RpcChannel channel;

    @BeforeEach
    void start() throws InterruptedException {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        listener = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        connections.incrementAndGet();
                        Http2FrameCodec codec = Http2FrameCodecBuilder.forServer().build();
                        ch.pipeline().addLast(codec, new Answers(codec));
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        int port = ((InetSocketAddress) listener.localAddress()).getPort();
        channel = RpcChannel.forAddress("127.0.0.1", port).wireProtocol(WireProtocol.GRPC).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        listener.close().sync();
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }

    private static MethodDescriptor<byte[], byte[]> method(String name) {
        return MethodDescriptor.create("test.Answers/" + name, MethodDescriptor.MethodType.UNARY, BYTES, BYTES);
    }

    private Status fails(String name) {
        return assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(channel, method(name), options(), new byte[3]))
                .getStatus();
    }

    @Test
    void httpStatusesWithoutGrpcStatusAreMappedAsGrpcSays() {
        assertEquals(Status.Code.UNAVAILABLE, fails("Http503").getCode());
        assertEquals(Status.Code.UNIMPLEMENTED, fails("Http404").getCode());
        assertEquals(Status.Code.UNAUTHENTICATED, fails("Http401").getCode());
        assertEquals(Status.Code.UNKNOWN, fails("Http418").getCode());
        Status html = fails("Html");
        assertEquals(Status.Code.UNKNOWN, html.getCode());
        assertTrue(html.getDescription().contains("text/html"), html.getDescription());
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(channel, method("Echo"), options(), new byte[3]));
        assertEquals(1, connections.get(), "every one of them left the connection open");
    }

    @Test
    void trailersOnlyAndMissingTrailers() {
        Status notFound = fails("TrailersOnly");
        assertEquals(Status.Code.NOT_FOUND, notFound.getCode());
        assertEquals("gone: 100% ✓", notFound.getDescription());
        Status noTrailers = fails("NoTrailers");
        assertEquals(Status.Code.INTERNAL, noTrailers.getCode());
        assertTrue(noTrailers.getDescription().contains("without trailers"), noTrailers.getDescription());
    }

    @Test
    void resetStreamsEndCallsWithGrpcsStatuses() {
        assertEquals(Status.Code.UNAVAILABLE, fails("RefusedStream").getCode());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, fails("EnhanceYourCalm").getCode());
        assertEquals(Status.Code.CANCELLED, fails("Cancel").getCode());
        assertEquals(Status.Code.INTERNAL, fails("InternalError").getCode());
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(channel, method("Echo"), options(), new byte[3]));
    }

    @Test
    void goAwayFailsTheStreamsItRefusesAndTheNextCallTakesANewConnection() {
        assertEquals(Status.Code.UNAVAILABLE, fails("GoAway").getCode());
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(channel, method("Echo"), options(), new byte[3]));
        assertEquals(2, connections.get());
    }

    /** Answers each request by its method name. */
    private static final class Answers extends ChannelDuplexHandler {
        private final Http2FrameCodec codec;
        /** Echo calls waiting for the end of their request. */
        private final java.util.Set<Http2FrameStream> echoes = new java.util.HashSet<>();
        Answers(Http2FrameCodec codec) {
            this.codec = codec;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2HeadersFrame h && !h.isEndStream()) {
                    answer(ctx, h.stream(), h.headers().path().toString());
                } else if (msg instanceof Http2DataFrame d) {
                    // a request's message: Echo answers once it ends
                    if (d.isEndStream() && echoes.remove(d.stream())) {
                        echo(ctx, d.stream());
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void answer(ChannelHandlerContext ctx, Http2FrameStream stream, String path) {
            String name = path.substring(path.lastIndexOf('/') + 1);
            switch (name) {
                case "Echo" -> echoes.add(stream);
                case "Http503", "Http404", "Http401", "Http418" -> headers(ctx, stream, status(name.substring(4)), true);
                case "Html" -> {
                    headers(ctx, stream, status("200").set("content-type", "text/html"), false);
                    ctx.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.copiedBuffer(new byte[] {'<', 'p', '>'}), true).stream(stream));
                }
                case "TrailersOnly" -> headers(ctx, stream, grpc().set("grpc-status", "5").set("grpc-message", "gone: 100%25 %E2%9C%93"), true);
                case "NoTrailers" -> {
                    headers(ctx, stream, grpc(), false);
                    ctx.writeAndFlush(new DefaultHttp2DataFrame(message(new byte[2]), true).stream(stream));
                }
                case "RefusedStream" -> reset(ctx, stream, Http2Error.REFUSED_STREAM);
                case "EnhanceYourCalm" -> reset(ctx, stream, Http2Error.ENHANCE_YOUR_CALM);
                case "Cancel" -> reset(ctx, stream, Http2Error.CANCEL);
                case "InternalError" -> reset(ctx, stream, Http2Error.INTERNAL_ERROR);
                case "GoAway" -> {
                    ChannelHandlerContext codecCtx = ctx.pipeline().context(codec);
                    codec.goAway(codecCtx, stream.id() - 2, Http2Error.NO_ERROR.code(), Unpooled.EMPTY_BUFFER, codecCtx.newPromise());
                    codecCtx.flush();
                }
                default -> headers(ctx, stream, grpc().set("grpc-status", "12"), true);
            }
        }

        private static void echo(ChannelHandlerContext ctx, Http2FrameStream stream) {
            headers(ctx, stream, grpc(), false);
            ctx.write(new DefaultHttp2DataFrame(message(new byte[3]), false).stream(stream));
            headers(ctx, stream, new DefaultHttp2Headers().set("grpc-status", "0"), true);
        }

        private static void reset(ChannelHandlerContext ctx, Http2FrameStream stream, Http2Error error) {
            ctx.writeAndFlush(new DefaultHttp2ResetFrame(error).stream(stream));
        }

        private static Http2Headers status(String code) {
            return new DefaultHttp2Headers().status(code);
        }

        private static Http2Headers grpc() {
            return status("200").set("content-type", "application/grpc");
        }

        private static void headers(ChannelHandlerContext ctx, Http2FrameStream stream, Http2Headers h, boolean end) {
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(h, end).stream(stream));
        }

        private static ByteBuf message(byte[] body) {
            return Unpooled.buffer(5 + body.length).writeByte(0).writeInt(body.length).writeBytes(body);
        }
    }
}
