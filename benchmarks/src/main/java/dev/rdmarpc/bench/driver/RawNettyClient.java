package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.BenchException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * netty-raw's client: requests written straight to a Netty channel, responses matched to requests
 * in order (one FIFO per connection). Each request's payload is copied into a fresh buffer, as
 * serializing a message would.
 */
final class RawNettyClient implements BenchClient {
    private final EventLoopGroup group;
    private final Conn[] conns;

    private RawNettyClient(EventLoopGroup group, Conn[] conns) {
        this.group = group;
        this.conns = conns;
    }

    static RawNettyClient connect(ClientSettings s) {
        int threads = Math.min(s.connections(), Runtime.getRuntime().availableProcessors());
        EventLoopGroup group = RawIo.group(threads, "netty-raw-client");
        Conn[] conns = new Conn[s.connections()];
        try {
            for (int i = 0; i < conns.length; i++) {
                conns[i] = new Conn(s.maxMessage());
                Bootstrap b = new Bootstrap().group(group).channel(RawIo.socketChannel())
                        .option(ChannelOption.TCP_NODELAY, true)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) s.connectTimeout().toMillis())
                        .handler(conns[i]);
                ChannelFuture f = b.connect(s.host(), s.port());
                if (!f.awaitUninterruptibly(s.connectTimeout().toMillis() + 1000) || !f.isSuccess()) {
                    throw new BenchException(BenchException.FAILED, "netty-raw: cannot connect to " + s.target() + ": "
                            + (f.cause() == null ? "timed out" : f.cause().getMessage()));
                }
                conns[i].channel = f.channel();
                conns[i].ping(s.connectTimeout().toMillis(), s.target());
            }
            return new RawNettyClient(group, conns);
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    @Override
    public String negotiated() {
        return "raw-" + RawIo.flavor();
    }

    @Override
    public Lane newLane(int index, Workload workload, LaneListener listener) {
        return new RawLane(conns[index % conns.length], workload, listener);
    }

    @Override
    public void close() {
        for (Conn c : conns) {
            if (c != null && c.channel != null) {
                c.channel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
            }
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** One lane: unary and bidi calls are ECHO frames, server-stream calls STREAM frames. */
    private static final class RawLane implements Lane {
        final Conn conn;
        final LaneListener listener;
        final byte[] payload;
        final boolean stream;
        final int count;
        final int size;

        RawLane(Conn conn, Workload w, LaneListener listener) {
            this.conn = conn;
            this.listener = listener;
            this.stream = w.kind() == dev.rdmarpc.bench.CallKind.SERVER_STREAM;
            this.payload = stream ? null : Payloads.bytes(w.payloadSize());
            this.count = w.streamLength();
            this.size = w.payloadSize();
        }

        @Override
        public void call(long startNanos) {
            conn.send(this, startNanos);
        }

        ByteBuf encode(Channel ch) {
            if (stream) {
                return ch.alloc().directBuffer(RawProtocol.HEADER + 8).writeInt(9).writeByte(RawProtocol.STREAM)
                        .writeInt(count).writeInt(size);
            }
            return ch.alloc().directBuffer(RawProtocol.HEADER + payload.length).writeInt(1 + payload.length)
                    .writeByte(RawProtocol.ECHO).writeBytes(payload);
        }

        @Override
        public void close() {
            // nothing per lane: the connection is closed with the client
        }
    }

    /** One connection: its FIFO of calls in flight is only touched on its event loop. */
    private static final class Conn extends ChannelInitializer<SocketChannel> {
        final StartFifo fifo = new StartFifo();
        final int maxMessage;
        volatile Channel channel;
        volatile CompletableFuture<Void> pong;
        volatile boolean dead;

        Conn(int maxMessage) {
            this.maxMessage = maxMessage;
        }

        @Override
        protected void initChannel(SocketChannel c) {
            c.pipeline().addLast(new LengthFieldBasedFrameDecoder(maxMessage + 16, 0, 4, 0, 4), new Reader());
        }

        void ping(long timeoutMillis, String target) {
            CompletableFuture<Void> p = new CompletableFuture<>();
            pong = p;
            channel.writeAndFlush(channel.alloc().buffer(RawProtocol.HEADER).writeInt(1).writeByte(RawProtocol.ECHO));
            try {
                p.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new BenchException(BenchException.FAILED, "netty-raw: no answer from " + target + " within "
                        + timeoutMillis + " ms (is it a netty-raw server?)");
            } catch (ExecutionException | InterruptedException e) {
                throw new BenchException(BenchException.FAILED, "netty-raw: first call to " + target + " failed: " + e.getMessage());
            }
        }

        void send(RawLane lane, long start) {
            Channel ch = channel;
            if (ch.eventLoop().inEventLoop()) {
                write(ch, lane, start);
            } else {
                ch.eventLoop().execute(() -> write(ch, lane, start));
            }
        }

        private void write(Channel ch, RawLane lane, long start) {
            if (dead) {
                lane.listener.onError(lane, start, new IOException("connection closed"));
                return;
            }
            fifo.add(lane, start);
            ch.writeAndFlush(lane.encode(ch), ch.voidPromise());
        }

        private void failAll(Throwable t) {
            dead = true;
            while (fifo.size() > 0) {
                long s = fifo.poll();
                RawLane lane = (RawLane) fifo.polledOwner();
                lane.listener.onError(lane, s, t);
            }
        }

        /** Matches responses to the oldest call in flight. */
        private final class Reader extends ChannelInboundHandlerAdapter {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf frame = (ByteBuf) msg;
                byte op = frame.readByte();
                frame.release();
                CompletableFuture<Void> p = pong;
                if (p != null) {
                    pong = null;
                    p.complete(null);
                    return;
                }
                if (op == RawProtocol.DATA) {
                    return;
                }
                long s = fifo.poll();
                RawLane lane = (RawLane) fifo.polledOwner();
                lane.listener.onComplete(lane, s);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                failAll(new IOException("netty-raw connection closed by the server"));
                CompletableFuture<Void> p = pong;
                if (p != null) {
                    p.completeExceptionally(new IOException("connection closed"));
                }
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                failAll(cause);
                ctx.close();
            }
        }
    }
}
