package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.RequestHeaders;
import dev.rdmarpc.core.protocol.Utf8Cache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.util.AsciiString;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;

/**
 * Turns the rdmarpc frames core sends to its server into gRPC over HTTP/2: request HEADERS as HTTP/2 request
 * headers, MESSAGE frames as length-prefixed DATA, END_STREAM as END_STREAM, WINDOW as returned flow-control credit,
 * CANCEL as RST_STREAM(CANCEL), PING as PING. Core's HELLO is kept: its limits become the connection's SETTINGS.
 */
final class H2ClientOutbound {
    private static final int MAX_PATHS = 256;
    private final H2ClientBridge bridge;
    private final ChannelHandlerContext ctx;
    private final boolean tls;
    /** Where small DATA contents are copied (see {@link GrpcFraming#data}). */
    private final SlabPool pool;
    private final SlabByteBufPool wrappers = new SlabByteBufPool(64);
    /** Paths and authorities of core's HEADERS, decoded once while they repeat. */
    private final Utf8Cache strings = new Utf8Cache(64);
    private final Map<String, AsciiString> paths = new HashMap<>();
    private String lastAuthority;
    private AsciiString lastAuthorityAscii;

    H2ClientOutbound(H2ClientBridge bridge, ChannelHandlerContext ctx, SlabPool pool, boolean tls) {
        this.bridge = bridge;
        this.ctx = ctx;
        this.pool = pool;
        this.tls = tls;
    }

    /** One whole frame from core; {@code payload} is released by the caller. */
    void frame(int type, int flags, int streamId, int credit, ByteBuf payload) {
        switch (type) {
            case FrameType.HELLO -> bridge.coreHello(Frames.decodeHello(segment(payload)));
            case FrameType.HEADERS -> {
                RequestHeaders h = Frames.decodeRequestHeaders(segment(payload), strings);
                bridge.open(streamId, (flags & FrameFlags.END_STREAM) != 0, GrpcClientHeaders.request(path(h.path()),
                        authority(h.authority()), tls, h.timeoutNanos(), h.metadata()));
            }
            case FrameType.MESSAGE -> message(flags, streamId, payload);
            case FrameType.END_STREAM -> {
                H2ClientStream s = bridge.byCore(streamId);
                if (s != null && !s.ended) {
                    bridge.writeData(s, Unpooled.EMPTY_BUFFER, true, 0);
                }
            }
            case FrameType.WINDOW -> {
                H2ClientStream s = bridge.byCore(streamId);
                if (s != null && !s.ended && credit > 0) {
                    bridge.returnCredit(s.h2, credit);
                }
            }
            case FrameType.CANCEL -> {
                H2ClientStream s = bridge.byCore(streamId);
                if (s != null) {
                    bridge.reset(s);
                }
            }
            case FrameType.PING -> {
                if ((flags & FrameFlags.ACK) == 0) {
                    bridge.write(new DefaultHttp2PingFrame(Frames.decodePing(segment(payload)), false));
                }
            }
            default -> {
                // GOAWAY and PING ACKs: a client's answers to a server that sends none over HTTP/2; RTS/FIN are RDMA's
            }
        }
    }

    private void message(int flags, int streamId, ByteBuf payload) {
        H2ClientStream s = bridge.byCore(streamId);
        if (s == null || s.ended) {
            return;
        }
        int credit = payload.readableBytes();
        s.sendCredit.sent(credit);
        ByteBuf data = GrpcFraming.data(ctx.alloc(), pool, wrappers, flags, payload);
        bridge.writeData(s, data, (flags & FrameFlags.END_STREAM) != 0, credit);
    }

    /** The {@code :path} of a call to {@code path}, made once per method (a few hundred at most are kept). */
    private AsciiString path(String path) {
        AsciiString p = paths.get(path);
        if (p == null) {
            if (paths.size() >= MAX_PATHS) {
                paths.clear();
            }
            p = GrpcClientHeaders.requestPath(path);
            paths.put(path, p);
        }
        return p;
    }

    private AsciiString authority(String authority) {
        if (!authority.equals(lastAuthority)) {
            lastAuthority = authority;
            lastAuthorityAscii = new AsciiString(authority);
        }
        return lastAuthorityAscii;
    }

    private static MemorySegment segment(ByteBuf payload) {
        return CoreFrames.decodable(payload);
    }
}
