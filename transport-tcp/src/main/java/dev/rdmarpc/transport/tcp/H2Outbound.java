package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Trailers;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;

import java.lang.foreign.MemorySegment;

/**
 * Turns the rdmarpc frames core sends to an HTTP/2 client into HTTP/2 frames: response HEADERS, MESSAGE frames as
 * length-prefixed DATA, TRAILERS as trailers (or a trailers-only response), WINDOW as returned flow-control credit,
 * PING and GOAWAY as theirs. The credit core's stream window needs back for what it sent is returned once the DATA
 * has been written to the socket, so what waits in HTTP/2 flow control is bounded by core's window.
 */
final class H2Outbound {
    private final H2Bridge bridge;
    private final ChannelHandlerContext ctx;
    /** Where small DATA contents are copied (see {@link GrpcFraming#data}). */
    private final SlabPool pool;
    private final SlabByteBufPool wrappers = new SlabByteBufPool(64);

    H2Outbound(H2Bridge bridge, ChannelHandlerContext ctx, SlabPool pool) {
        this.bridge = bridge;
        this.ctx = ctx;
        this.pool = pool;
    }

    /** One whole frame from core; {@code payload} is released by the caller. */
    void frame(int type, int flags, int streamId, int credit, ByteBuf payload) {
        switch (type) {
            case FrameType.HELLO -> bridge.coreHello(Frames.decodeHello(segment(payload)));
            case FrameType.HEADERS -> headers(streamId, payload);
            case FrameType.MESSAGE -> message(flags, streamId, payload);
            case FrameType.TRAILERS -> trailers(streamId, payload);
            case FrameType.WINDOW -> bridge.coreWindow(streamId, credit,
                    streamId == 0 && payload.readableBytes() == Frames.CONNECTION_WINDOW_SIZE ? Frames.decodeConnectionWindow(segment(payload)) : 0);
            case FrameType.PING -> {
                if ((flags & FrameFlags.ACK) == 0) {
                    bridge.write(new DefaultHttp2PingFrame(Frames.decodePing(segment(payload)), false));
                }
            }
            case FrameType.GOAWAY -> {
                Frames.GoAway g = Frames.decodeGoAway(segment(payload));
                Status st = g.status();
                Http2Error code = st.getCode() == Status.Code.RESOURCE_EXHAUSTED ? Http2Error.ENHANCE_YOUR_CALM : Http2Error.NO_ERROR;
                bridge.goAway(g.lastStreamId(), code, st.getDescription());
            }
            default -> {
                // CANCEL, END_STREAM: client frames a server never sends; RTS/FIN belong to RDMA
            }
        }
    }

    private void headers(int streamId, ByteBuf payload) {
        H2Stream s = bridge.byCore(streamId);
        if (s == null || s.ended || s.headersSent) {
            return;
        }
        s.headersSent = true;
        Http2Headers h = GrpcHeaders.response(Frames.decodeResponseHeaders(segment(payload)));
        bridge.write(new DefaultHttp2HeadersFrame(h, false).stream(s.h2));
    }

    private void message(int flags, int streamId, ByteBuf payload) {
        H2Stream s = bridge.byCore(streamId);
        int credit = payload.readableBytes();
        if (s == null || s.ended) {
            if ((flags & FrameFlags.BEGIN) != 0) { // a message for a call already over: core took its charge all the same
                bridge.returnConnectionCredit(FlowCapability.messageCharge(4 + payload.getUnsignedIntLE(payload.readerIndex()),
                        credit, H2Bridge.SEND_CONNECTION_WINDOW));
            }
            return;
        }
        if ((flags & FrameFlags.BEGIN) != 0) {
            long length = payload.getUnsignedIntLE(payload.readerIndex());
            // what core took from this bridge's connection window for the message, as PROTOCOL.md "Flow control" says
            s.sendCharge = FlowCapability.messageCharge(4 + length, credit, H2Bridge.SEND_CONNECTION_WINDOW);
        }
        s.sendCredit.sent(credit);
        ByteBuf data = GrpcFraming.data(ctx.alloc(), pool, wrappers, flags, payload);
        int connectionCredit = 0;
        if ((flags & FrameFlags.END) != 0) {
            connectionCredit = s.sendCharge;
            s.sendCharge = 0;
        }
        bridge.writeData(s, new DefaultHttp2DataFrame(data, false).stream(s.h2), credit, connectionCredit);
    }

    private void trailers(int streamId, ByteBuf payload) {
        H2Stream s = bridge.byCore(streamId);
        if (s == null || s.ended) {
            return;
        }
        Trailers t = Frames.decodeTrailers(segment(payload));
        if (t.status().getCode() == Status.Code.DEADLINE_EXCEEDED && s.deadlinePassed(System.nanoTime())) {
            // the call's deadline passed on the server: reset the stream, as grpc-java's server does; the client, whose
            // deadline passed no later, reports DEADLINE_EXCEEDED in its own words
            bridge.resetStream(s);
            return;
        }
        bridge.endStream(s, GrpcHeaders.trailers(t.status(), t.metadata(), !s.headersSent));
    }

    private static MemorySegment segment(ByteBuf payload) {
        return CoreFrames.decodable(payload);
    }
}
