package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import dev.rdmarpc.core.protocol.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;

import java.util.ArrayDeque;
import java.util.Map;

/**
 * Serves a gRPC-over-HTTP/2 client on an rdmarpc server connection by translation, so that core's call path is the
 * same for both protocols. It sits in the pipeline between Netty's HTTP/2 codec (framing, HPACK, flow control) and the
 * {@link TcpChannelHandler}: the client's HTTP/2 frames become the rdmarpc frames an rdmarpc client would have sent
 * ({@link H2Inbound}), handed to core as if read ({@link TcpFrameConnection#receiveMade(SlabBuffer)}); the rdmarpc
 * frames core writes become HTTP/2 frames ({@link H2Outbound}). Core sees a client whose HELLO this bridge makes up; the HELLO core answers with gives
 * the codec its SETTINGS (core's limits), so the codec is added only then, and the client's first bytes wait.
 */
final class H2Bridge extends ChannelDuplexHandler implements H2Link.StreamEnds {
    static final String NAME = "rdmarpc-h2-bridge";
    static final String CODEC_NAME = "rdmarpc-h2-codec";
    /** What a client may send before its connection is set up: the preface and its first requests. */
    static final int MAX_EARLY_BYTES = 1 << 20;
    /** The window core may send into per stream before DATA written to the socket returns credit. */
    static final int SEND_WINDOW = 1 << 20;
    /**
     * The connection window core may send into, all streams together, before DATA written to the socket returns
     * credit: what waits for the client's HTTP/2 windows in the codec stays under it however many streams stall.
     */
    static final int SEND_CONNECTION_WINDOW = 4 << 20;
    /**
     * The HELLO this bridge gives core on the client's behalf: no attachments, no RDMA, no metadata limit of its own; a
     * connection window for core's responses, and core's own connection window kept when handing it requests (each
     * message is admitted, its whole charge taken, before its first frame goes to core; see {@link #admit}).
     */
    private static final Hello CLIENT_HELLO = new Hello(Hello.VERSION, SEND_WINDOW, FrameHeader.DEFAULT_MAX_PAYLOAD,
            Integer.MAX_VALUE, Map.of(Hello.CAP_LIMITS, new LimitsCapability(0, Integer.MAX_VALUE).encode(),
                    Hello.CAP_FLOW, new FlowCapability(true, SEND_CONNECTION_WINDOW).encode()));

    private final TcpFrameConnection connection;
    private final SlabPool pool;
    private final IntObjectMap<H2Stream> byH2 = new IntObjectHashMap<>();
    private final IntObjectMap<H2Stream> byCore = new IntObjectHashMap<>();
    /** Streams whose message waits for connection credit to be admitted, first come first admitted. */
    private final ArrayDeque<H2Stream> waiting = new ArrayDeque<>();
    private final PingPolicy pings = new PingPolicy(System.nanoTime());
    private final SettingsBudget settings = new SettingsBudget(System.nanoTime());
    private ChannelHandlerContext ctx;
    private CoreFrames frames;
    private H2Inbound inbound;
    private H2Outbound outbound;
    /** The client's bytes until the codec is in place; null after. */
    private CompositeByteBuf early;
    private H2Link link;
    private Http2FrameCodec codec;
    private H2AdmittedWindows windows;
    private Hello coreHello;
    /** Core's connection window, and what is left of it for messages not yet admitted. */
    private int coreConnectionWindow;
    /** Whether a BLOCKED went to core since its last connection WINDOW. */
    private boolean blockedSignalled;
    private long connectionCredit;
    /** This bridge's connection window that core is owed back and a task will return (see {@link #owe}). */
    private int owedConnectionCredit;
    /** The highest HTTP/2 stream id seen, and the id of core's last stream's HTTP/2 stream (for GOAWAY). */
    private int lastH2Id;
    private int lastCoreId;
    private int lastCoreH2Id;

    H2Bridge(TcpFrameConnection connection, SlabPool pool) {
        this.connection = connection;
        this.pool = pool;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
        this.early = context.alloc().compositeBuffer(Integer.MAX_VALUE);
        this.frames = new CoreFrames(pool);
        this.inbound = new H2Inbound(this, frames);
        this.outbound = new H2Outbound(this, context, pool);
        this.link = new H2Link(connection, context, outbound::frame, this,
                Status.CANCELLED.withDescription("the HTTP/2 stream closed"));
    }

    /** Takes the connection's first bytes (the HTTP/2 preface) and, after this read, gives core the client's HELLO. */
    void start(ByteBuf first) {
        early.addComponent(true, first);
        ctx.executor().execute(() -> {
            if (!link.released()) {
                toCore(frames.hello(CLIENT_HELLO));
                ctx.fireChannelReadComplete();
            }
        });
    }

    /** Core's HELLO: its limits become the codec's SETTINGS, and the client's bytes so far go to the codec. */
    void coreHello(Hello hello) {
        if (coreHello != null) {
            return;
        }
        coreHello = hello;
        FlowCapability flow = FlowCapability.of(hello);
        coreConnectionWindow = flow == null ? Integer.MAX_VALUE : flow.connectionWindow();
        connectionCredit = coreConnectionWindow;
        ctx.executor().execute(this::addCodec);
    }

    private void addCodec() {
        if (link.released() || !ctx.channel().isActive()) {
            return;
        }
        codec = H2Codecs.server(coreHello, pings::reset);
        windows = new H2AdmittedWindows(codec.connection());
        ctx.pipeline().addBefore(ctx.name(), CODEC_NAME, codec);
        ChannelHandlerContext codecCtx = ctx.pipeline().context(codec);
        int window = H2Codecs.serverConnectionWindow();
        if (window > 65_535) {
            write(new DefaultHttp2WindowUpdateFrame(window - 65_535));
        }
        ByteBuf bytes = early;
        early = null;
        try {
            codec.channelRead(codecCtx, bytes);
            codec.channelReadComplete(codecCtx);
        } catch (Exception e) {
            codecCtx.fireExceptionCaught(e);
        }
    }

    // ---- from the client ----

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        if (msg instanceof ByteBuf bytes) { // before the codec is in place
            if (early == null) {
                bytes.release();
            } else if (early.readableBytes() + bytes.readableBytes() > MAX_EARLY_BYTES) {
                bytes.release();
                connection.closeOnError(new ProtocolException("the HTTP/2 client sent more than " + MAX_EARLY_BYTES
                        + " bytes before the connection was set up"));
            } else {
                early.addComponent(true, bytes);
            }
            return;
        }
        try {
            if (msg instanceof Http2HeadersFrame h) {
                inbound.headers(h);
            } else if (msg instanceof Http2DataFrame d) {
                inbound.data(d);
            } else if (msg instanceof Http2ResetFrame r) {
                inbound.reset(r);
            } else if (msg instanceof Http2PingFrame p) {
                ping(p);
            } else if (msg instanceof Http2SettingsFrame) {
                settings();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void ping(Http2PingFrame p) {
        if (p.ack()) {
            toCore(frames.pingAck(p.content()));
        } else if (!pings.acceptable(System.nanoTime(), !byH2.isEmpty())) {
            goAway(Integer.MAX_VALUE, Http2Error.ENHANCE_YOUR_CALM, "too_many_pings");
            connection.close("too many PINGs from the HTTP/2 client (more than keepalive enforcement permits)");
        }
    }

    /** A SETTINGS from the client (the codec has applied and acknowledged it): charged to its budget. */
    private void settings() {
        if (!settings.tryTake(System.nanoTime())) {
            goAway(Integer.MAX_VALUE, Http2Error.ENHANCE_YOUR_CALM, "too_many_settings");
            connection.close("too many SETTINGS frames from the HTTP/2 client (more than " + SettingsBudget.PER_SECOND
                    + "/s with a burst of " + SettingsBudget.BURST + ")");
        }
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
        H2Stream s = byH2.get(id);
        if (s != null) {
            cancel(s, status);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        release();
        context.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext context) {
        release();
    }

    private void release() {
        if (!link.release()) {
            return;
        }
        if (early != null) {
            early.release();
            early = null;
        }
        for (H2Stream s : byH2.values()) {
            s.releaseHeld();
        }
        waiting.clear();
        byH2.clear();
        byCore.clear();
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

    // ---- for H2Inbound and H2Outbound ----

    ByteBufAllocator alloc() {
        return ctx.alloc();
    }

    /** Core's window for each stream's requests (its HELLO's initial window). */
    int coreStreamWindow() {
        return coreHello.initialWindow();
    }

    /**
     * Admits the message stream {@code s} is to hand core next, whose cost is {@code cost} (PROTOCOL.md "Connection
     * window") and whose BEGIN frame will carry at most {@code beginPayload} bytes: takes its charge from core's
     * connection window if enough is left and no stream waits before it, else queues the stream (false). An admitted
     * message always completes, however many others wait, so waiting cannot deadlock.
     */
    boolean admit(H2Stream s, long cost, int beginPayload) {
        int charge = FlowCapability.messageCharge(cost, beginPayload, coreConnectionWindow);
        if ((waiting.isEmpty() || waiting.peekFirst() == s) && charge <= connectionCredit) {
            if (s.waiting) {
                waiting.pollFirst();
                s.waiting = false;
            }
            connectionCredit -= charge;
            s.charge = charge;
            s.admitted = true;
            windows.widen(s);
            return true;
        }
        if (!s.waiting) {
            s.waiting = true;
            waiting.addLast(s);
        }
        if (charge > connectionCredit && !blockedSignalled) {
            // core holds back credit until it is worth a frame: a BLOCKED has it return what it owes now
            blockedSignalled = true;
            toCore(frames.connectionBlocked());
        }
        return false;
    }

    /** The admitted message of {@code s} has been handed to core: its stream's HTTP/2 window is back to its own. */
    void narrowWindow(H2Stream s) {
        windows.narrow(s);
    }

    /**
     * The admitted message of {@code s} goes to core with a BEGIN frame of {@code beginPayload} bytes: core takes the
     * charge from it (which for a message larger than the whole window is the frame's, at most the estimate).
     */
    void begun(H2Stream s, int beginPayload) {
        int charge = FlowCapability.messageCharge(4 + s.bodyLeft, beginPayload, coreConnectionWindow);
        connectionCredit += s.charge - charge;
        s.charge = 0;
    }

    /** Core returned {@code increment} bytes of its connection window: waiting messages are admitted in turn. */
    private void connectionCreditReturned(int increment) {
        connectionCredit += increment;
        blockedSignalled = false;
        admitWaiting();
    }

    private void admitWaiting() {
        H2Stream head;
        while (!link.released() && (head = waiting.peekFirst()) != null) {
            if (head.ended) {
                waiting.pollFirst();
                continue;
            }
            inbound.resume(head);
            if (waiting.peekFirst() == head) {
                break; // still not enough credit
            }
        }
        ctx.fireChannelReadComplete();
        ctx.flush(); // the client's credit for what was handed
    }

    /**
     * Core's WINDOW: on stream 0 connection credit, else room in a stream's window. Handled after the frame core is
     * writing, not inside it, as the bytes it lets through go to core.
     */
    void coreWindow(int streamId, int credit, int connectionIncrement) {
        ctx.executor().execute(() -> {
            if (link.released()) {
                return;
            }
            if (streamId == 0) {
                if (connectionIncrement > 0) {
                    connectionCreditReturned(connectionIncrement);
                } // 0 is core's BLOCKED: nothing to do, the bridge returns each response's charge once it is written
                return;
            }
            H2Stream s = byCore.get(streamId);
            if (s != null && credit > 0) {
                s.coreWindow += credit;
                inbound.resume(s);
                ctx.fireChannelReadComplete();
                ctx.flush(); // the client's credit for what was handed
            }
        });
    }

    /** Hands one rdmarpc frame to core. */
    void toCore(SlabBuffer frame) {
        link.toCore(frame);
    }

    H2Stream byH2(int id) {
        return byH2.get(id);
    }

    H2Stream byCore(int id) {
        return byCore.get(id);
    }

    int coreMaxPayload() {
        return coreHello == null ? FrameHeader.DEFAULT_MAX_PAYLOAD : coreHello.maxFramePayload();
    }

    /** Whether {@code id} is a stream not seen before (HTTP/2 ids only grow; the codec checks that). */
    boolean newStream(int id) {
        if (id <= lastH2Id) {
            return false;
        }
        lastH2Id = id;
        return true;
    }

    void opened(H2Stream s) {
        byH2.put(s.h2.id(), s);
        byCore.put(s.coreId, s);
        lastCoreId = s.coreId;
        lastCoreH2Id = s.h2.id();
    }

    /** Answers a request that is not a gRPC call, without core. */
    void refuse(Http2FrameStream stream, GrpcHeaders.Refusal refusal) {
        write(new DefaultHttp2HeadersFrame(GrpcHeaders.httpError(refusal), true).stream(stream));
        ctx.flush();
    }

    /** Core's TRAILERS: the last HEADERS of the stream; the call is over. */
    void endStream(H2Stream s, Http2Headers trailers) {
        forget(s);
        write(new DefaultHttp2HeadersFrame(trailers, true).stream(s.h2));
    }

    /** Core ended the call past its deadline: the client gets RST_STREAM (CANCEL) instead of trailers. */
    void resetStream(H2Stream s) {
        forget(s);
        write(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(s.h2));
    }

    /** Ends a call core is still running: core hears CANCEL with {@code status}, the client gets it as trailers. */
    void fail(H2Stream s, Status status) {
        cancel(s, status);
        write(new DefaultHttp2HeadersFrame(GrpcHeaders.trailers(status, null, !s.headersSent), true).stream(s.h2));
        ctx.flush();
    }

    /** Tells core the client abandoned the call. */
    void cancel(H2Stream s, Status status) {
        if (s.ended) {
            return;
        }
        forget(s);
        toCore(frames.cancel(s.coreId, status));
    }

    private void forget(H2Stream s) {
        if (s.sendCharge > 0) { // a response message begun and never finished: its charge goes back to core
            returnConnectionCredit(s.sendCharge);
            s.sendCharge = 0;
        }
        s.ended = true;
        returnCredit(s.h2, s.unreturned()); // the client's bytes this side held are dropped
        s.releaseHeld();
        if (s.waiting) {
            waiting.remove(s);
            s.waiting = false;
        }
        if (s.charge > 0) { // admitted, and its BEGIN never went to core
            connectionCredit += s.charge;
            s.charge = 0;
            ctx.executor().execute(this::admitWaiting);
        }
        byH2.remove(s.h2.id());
        byCore.remove(s.coreId);
    }

    /**
     * Gives core back {@code charge} bytes of this bridge's connection window for a response message that will not
     * reach the socket (its stream ended); after the frame core is writing, not inside it.
     */
    void returnConnectionCredit(int charge) {
        owe(charge);
    }

    /** Returns {@code bytes} of the client's flow-control credit on the stream (and the connection). */
    void returnCredit(H2Stream s, int bytes) {
        returnCredit(s.h2, bytes);
    }

    void returnCredit(Http2FrameStream stream, int bytes) {
        link.returnCredit(stream, bytes);
    }

    /**
     * Writes a DATA frame; once on the socket, its {@code credit} is owed to core for the stream, if its call goes on
     * (given back as {@link StreamSendCredit} says), and {@code connectionCredit} (a finished message's charge, or 0)
     * for the connection.
     */
    void writeData(H2Stream s, Http2DataFrame data, int credit, int connectionCredit) {
        ctx.write(data).addListener((ChannelFuture f) -> {
            if (!f.isSuccess() || link.released()) {
                return;
            }
            int back = s.ended ? 0 : s.sendCredit.written(credit);
            if (back > 0) {
                toCore(frames.window(s.coreId, back));
                link.readComplete();
            }
            if (connectionCredit > 0) {
                owe(connectionCredit);
            }
        });
    }

    /**
     * Owes core {@code charge} bytes of this bridge's connection window: what is owed goes back in one WINDOW from a
     * task of its own, after the writes and flushes under way (all the messages one flush put on the socket, say).
     */
    private void owe(int charge) {
        if (owedConnectionCredit == 0) {
            ctx.executor().execute(this::returnOwed);
        }
        owedConnectionCredit += charge;
    }

    private void returnOwed() {
        int credit = owedConnectionCredit;
        owedConnectionCredit = 0;
        if (credit > 0 && !link.released()) {
            toCore(frames.connectionWindow(credit));
            link.readComplete();
        }
    }

    void write(Object frame) {
        link.write(frame);
    }

    /** GOAWAY naming the HTTP/2 stream of core's stream {@code lastCoreStream} (or all streams for 2^31-1). */
    void goAway(int lastCoreStream, Http2Error error, String debug) {
        if (codec == null) {
            return;
        }
        int last = lastCoreStream == Integer.MAX_VALUE ? Integer.MAX_VALUE
                : lastCoreStream >= lastCoreId ? lastCoreH2Id
                : lastCoreH2IdBelow(lastCoreStream);
        ByteBuf data = debug == null ? ctx.alloc().buffer(0) : ByteBufUtil.writeUtf8(ctx.alloc(), debug);
        ChannelHandlerContext codecCtx = ctx.pipeline().context(codec);
        codec.goAway(codecCtx, last, error.code(), data, codecCtx.newPromise());
        codecCtx.flush();
    }

    /** The HTTP/2 id of the highest core stream at or below {@code coreId} still open, or of the last one seen. */
    private int lastCoreH2IdBelow(int coreId) {
        int best = 0;
        int bestCore = -1;
        for (H2Stream s : byCore.values()) {
            if (s.coreId <= coreId && s.coreId > bestCore) {
                bestCore = s.coreId;
                best = s.h2.id();
            }
        }
        return bestCore < 0 ? lastCoreH2Id : best;
    }
}
