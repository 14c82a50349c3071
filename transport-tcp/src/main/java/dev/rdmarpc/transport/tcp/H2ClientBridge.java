package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.DefaultHttp2SettingsFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Lets core's client call a standard gRPC server over HTTP/2 by translation, so that core's call path is the same for
 * both protocols: the mirror of {@link H2Bridge}. It sits in the pipeline between Netty's HTTP/2 codec and the
 * {@link TcpChannelHandler}: the rdmarpc frames core writes become HTTP/2 frames ({@link H2ClientOutbound}), the
 * server's HTTP/2 frames become the rdmarpc frames an rdmarpc server would have sent ({@link H2ClientInbound}), handed
 * to core as if read ({@link TcpFrameConnection#receiveMade(dev.rdmarpc.core.buffer.SlabBuffer)}). Core's HELLO is answered on the server's behalf once the server's first
 * SETTINGS arrived (its concurrent-stream limit becomes core's); the answer offers no RDMA, so such a connection never
 * upgrades.
 */
final class H2ClientBridge extends Http2ChannelDuplexHandler implements H2Link.StreamEnds {
    static final String NAME = "rdmarpc-h2-client-bridge";
    static final String CODEC_NAME = "rdmarpc-h2-client-codec";

    private final TcpFrameConnection connection;
    private final SlabPool pool;
    private final boolean tls;
    private final IntObjectMap<H2ClientStream> byCore = new IntObjectHashMap<>();
    private final IntObjectMap<H2ClientStream> byH2 = new IntObjectHashMap<>();
    private ChannelHandlerContext ctx;
    private CoreFrames frames;
    private H2ClientInbound inbound;
    private H2ClientOutbound outbound;
    private H2Link link;
    private Hello coreHello;
    private Http2Settings serverSettings;
    private boolean helloAnswered;

    H2ClientBridge(TcpFrameConnection connection, SlabPool pool, boolean tls) {
        this.connection = connection;
        this.pool = pool;
        this.tls = tls;
    }

    @Override
    protected void handlerAdded0(ChannelHandlerContext context) {
        this.ctx = context;
        this.frames = new CoreFrames(pool);
        this.inbound = new H2ClientInbound(this, frames);
        this.outbound = new H2ClientOutbound(this, context, pool, tls);
        this.link = new H2Link(connection, context, outbound::frame, this, Status.UNAVAILABLE.withDescription(
                "the HTTP/2 stream closed before the server answered")); // refused by GOAWAY, or the connection is going
    }

    // ---- from the server ----

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        try {
            if (link.released()) {
                return;
            }
            if (msg instanceof Http2HeadersFrame h) {
                inbound.headers(h);
            } else if (msg instanceof Http2DataFrame d) {
                inbound.data(d);
            } else if (msg instanceof Http2ResetFrame r) {
                H2ClientStream s = byH2.get(r.stream().id());
                if (s != null) {
                    cancelCore(s, GrpcClientHeaders.reset(r.errorCode()));
                }
            } else if (msg instanceof Http2PingFrame p && p.ack()) {
                toCore(frames.pingAck(p.content()));
            } else if (msg instanceof Http2SettingsFrame s && serverSettings == null) {
                serverSettings = s.settings();
                answerHello();
            } else if (msg instanceof Http2GoAwayFrame g) {
                goAway(g);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void goAway(Http2GoAwayFrame g) {
        int lastCore = 0;
        for (H2ClientStream s : byCore.values()) {
            if (s.h2.id() <= g.lastStreamId() && s.coreId > lastCore) {
                lastCore = s.coreId;
            }
        }
        Http2Error error = Http2Error.valueOf(g.errorCode());
        String debug = g.content().toString(StandardCharsets.UTF_8);
        toCore(frames.goAway(g.lastStreamId() == Integer.MAX_VALUE ? Integer.MAX_VALUE : lastCore,
                Status.UNAVAILABLE.withDescription("HTTP/2 GOAWAY " + (error == null ? g.errorCode() : error)
                        + (debug.isEmpty() ? "" : ": " + debug))));
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext context, Object evt) {
        if (!link.userEvent(evt)) {
            context.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
        if (!link.exception(cause)) {
            context.fireExceptionCaught(cause);
        }
    }

    @Override
    public void streamGone(int id, Status status) {
        H2ClientStream s = byH2.get(id);
        if (s != null) {
            cancelCore(s, status);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        release();
        context.fireChannelInactive();
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext context) {
        release();
    }

    private void release() {
        if (link == null || !link.release()) {
            return;
        }
        byCore.clear();
        byH2.clear();
    }

    // ---- from core ----

    @Override
    public void write(ChannelHandlerContext context, Object msg, ChannelPromise promise) {
        link.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext context) {
        link.flush();
    }

    // ---- for H2ClientInbound and H2ClientOutbound ----

    /**
     * Core's HELLO: its window and metadata limit become this side's SETTINGS, the connection's window opens to
     * {@link H2Codecs#CLIENT_CONNECTION_WINDOW}; it is answered once the server's came.
     */
    void coreHello(Hello hello) {
        if (coreHello != null) {
            return;
        }
        coreHello = hello;
        write(new DefaultHttp2SettingsFrame(H2Codecs.clientSettings(hello)));
        write(new DefaultHttp2WindowUpdateFrame(H2Codecs.CLIENT_CONNECTION_WINDOW - Http2CodecUtil.DEFAULT_WINDOW_SIZE));
        ctx.flush();
        answerHello();
    }

    /** Gives core the server's HELLO as HTTP/2 let this side know it: its concurrent-stream limit, no RDMA. */
    private void answerHello() {
        if (helloAnswered || coreHello == null || serverSettings == null) {
            return;
        }
        helloAnswered = true;
        Long streams = serverSettings.maxConcurrentStreams();
        int maxStreams = streams == null ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE, streams);
        Hello server = new Hello(Hello.VERSION, H2Bridge.SEND_WINDOW, FrameHeader.DEFAULT_MAX_PAYLOAD, Integer.MAX_VALUE,
                Map.of(Hello.CAP_LIMITS, new LimitsCapability(Math.max(1, maxStreams), Integer.MAX_VALUE).encode()));
        toCore(frames.hello(server));
    }

    /** Opens the HTTP/2 stream of core's stream {@code coreId} with its request headers. */
    void open(int coreId, boolean endStream, Http2Headers headers) {
        Http2FrameStream stream = newStream();
        H2ClientStream s = new H2ClientStream(coreId, stream);
        s.clientDone = endStream;
        byCore.put(coreId, s);
        ctx.write(new DefaultHttp2HeadersFrame(headers, endStream).stream(stream)).addListener((ChannelFuture f) -> {
            if (!f.isSuccess() && !s.ended) {
                forget(s);
                link.toCoreLater(frames.cancel(s.coreId, Status.UNAVAILABLE.withDescription(
                        "the HTTP/2 stream could not be opened: " + f.cause().getMessage())));
            }
        });
        if (stream.id() > 0 && !s.ended) {
            byH2.put(stream.id(), s);
        }
    }

    H2ClientStream byCore(int id) {
        return byCore.get(id);
    }

    H2ClientStream byH2(int id) {
        return byH2.get(id);
    }

    int coreMaxPayload() {
        return coreHello == null ? FrameHeader.DEFAULT_MAX_PAYLOAD : coreHello.maxFramePayload();
    }

    /** Hands one rdmarpc frame to core. */
    void toCore(SlabBuffer frame) {
        link.toCore(frame);
    }

    /** The server's trailers: core hears TRAILERS; a request stream still open is reset, as gRPC clients do. */
    void endStream(H2ClientStream s, Status status, Metadata md) {
        forget(s);
        toCore(frames.trailers(s.coreId, status, md));
        if (!s.clientDone) {
            write(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(s.h2));
            ctx.flush();
        }
    }

    /** Ends a call because of what the server sent: core hears CANCEL with {@code status}, the server RST_STREAM. */
    void fail(H2ClientStream s, Status status) {
        cancelCore(s, status);
        write(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(s.h2));
        ctx.flush();
    }

    /** Core cancelled the call: the server hears RST_STREAM(CANCEL). */
    void reset(H2ClientStream s) {
        boolean open = !s.ended;
        forget(s);
        if (open) {
            write(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(s.h2));
        }
    }

    /** Tells core the call ended on the server's side (or the transport's) with {@code status}. */
    void cancelCore(H2ClientStream s, Status status) {
        if (s.ended) {
            return;
        }
        forget(s);
        toCore(frames.cancel(s.coreId, status));
    }

    private void forget(H2ClientStream s) {
        s.ended = true;
        byCore.remove(s.coreId);
        byH2.remove(s.h2.id());
    }

    /** Returns {@code bytes} of the server's flow-control credit on the stream (and the connection). */
    void returnCredit(Http2FrameStream stream, int bytes) {
        link.returnCredit(stream, bytes);
    }

    /**
     * Writes a DATA frame; once on the socket, its {@code credit} is owed to core for the stream, if its call goes on,
     * and given back as {@link StreamSendCredit} says.
     */
    void writeData(H2ClientStream s, ByteBuf data, boolean endStream, int credit) {
        if (endStream) {
            s.clientDone = true;
        }
        ctx.write(new DefaultHttp2DataFrame(data, endStream).stream(s.h2)).addListener((ChannelFuture f) -> {
            if (f.isSuccess() && credit > 0 && !s.ended && !link.released()) {
                int back = s.sendCredit.written(credit);
                if (back > 0) {
                    link.toCoreLater(frames.window(s.coreId, back));
                }
            }
        });
    }

    void write(Object frame) {
        link.write(frame);
    }
}
