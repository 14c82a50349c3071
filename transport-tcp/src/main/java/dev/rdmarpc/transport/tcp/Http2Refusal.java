package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Answers a gRPC-over-HTTP/2 client that dialled an rdmarpc server the way a gRPC server would
 * refuse a call: an empty SETTINGS frame, then, for the client's first HEADERS, a trailers-only
 * response with {@code grpc-status 14} (UNAVAILABLE) and a {@code grpc-message} naming the protocol
 * mismatch, then GOAWAY and close. So the grpc client fails fast with a status that says what is
 * wrong instead of a bare connection reset.
 */
final class Http2Refusal {
    static final String MESSAGE = "this port speaks the rdmarpc protocol, not gRPC over HTTP/2: "
            + "use dev.rdmarpc.grpc.RdmaChannelBuilder (or an rdmarpc RpcChannel) to call it";
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADERS = 0x1;
    private static final int SETTINGS = 0x4;
    private static final int GOAWAY = 0x7;
    private static final int FLAG_ACK = 0x1;
    private static final int FLAG_END_STREAM = 0x1;
    private static final int FLAG_END_HEADERS = 0x4;
    private static final int MAX_BUFFERED = 64 * 1024;

    private final ChannelHandlerContext ctx;
    private final TcpFrameConnection connection;
    private final ByteBuf pending = Unpooled.buffer(256);
    private boolean prefaceSeen;
    private boolean answered;
    private boolean finished;

    Http2Refusal(ChannelHandlerContext ctx, TcpFrameConnection connection) {
        this.ctx = ctx;
        this.connection = connection;
        ctx.writeAndFlush(frame(SETTINGS, 0, 0, Unpooled.EMPTY_BUFFER));
        ctx.executor().schedule(this::finish, 2, TimeUnit.SECONDS);
    }

    /** Whether a connection's first bytes are the HTTP/2 client preface (or its start). */
    static boolean looksLikePreface(ByteBuf in) {
        int n = Math.min(in.readableBytes(), PREFACE.length);
        if (n < 4) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (in.getByte(in.readerIndex() + i) != PREFACE[i]) {
                return false;
            }
        }
        return true;
    }

    /** Takes a read (releasing it) and answers once the client's first HEADERS has arrived. */
    void read(ByteBuf in) {
        try {
            if (finished) {
                return;
            }
            if (answered || pending.readableBytes() + in.readableBytes() > MAX_BUFFERED) {
                finish();
                return;
            }
            pending.writeBytes(in);
        } finally {
            in.release();
        }
        if (!prefaceSeen) {
            if (pending.readableBytes() < PREFACE.length) {
                return;
            }
            pending.skipBytes(PREFACE.length);
            prefaceSeen = true;
        }
        while (!answered && pending.readableBytes() >= 9) {
            int start = pending.readerIndex();
            int length = pending.getUnsignedMedium(start);
            if (pending.readableBytes() < 9 + length) {
                break;
            }
            int type = pending.getUnsignedByte(start + 3);
            int flags = pending.getUnsignedByte(start + 4);
            int streamId = pending.getInt(start + 5) & 0x7fffffff;
            pending.skipBytes(9 + length);
            if (type == SETTINGS && (flags & FLAG_ACK) == 0) {
                ctx.write(frame(SETTINGS, FLAG_ACK, 0, Unpooled.EMPTY_BUFFER));
            } else if (type == HEADERS && streamId != 0) {
                answered = true;
                ctx.write(frame(HEADERS, FLAG_END_STREAM | FLAG_END_HEADERS, streamId, refusalHeaders()));
                ByteBuf goAway = Unpooled.buffer(8).writeInt(streamId).writeInt(0);
                ctx.write(frame(GOAWAY, 0, 0, goAway));
            }
        }
        ctx.flush();
        if (answered) {
            finish();
        }
    }

    private void finish() {
        if (finished) {
            return;
        }
        finished = true;
        pending.release();
        connection.closeOnError(new ProtocolException(
                "peer sent an HTTP/2 connection preface: it speaks gRPC/HTTP2, not the rdmarpc protocol (answered with grpc-status 14)"));
    }

    private static ByteBuf frame(int type, int flags, int streamId, ByteBuf payload) {
        ByteBuf f = Unpooled.buffer(9 + payload.readableBytes());
        f.writeMedium(payload.readableBytes()).writeByte(type).writeByte(flags).writeInt(streamId).writeBytes(payload);
        payload.release();
        return f;
    }

    /** HPACK: ":status: 200" from the static table, the rest as literals without indexing. */
    private static ByteBuf refusalHeaders() {
        ByteBuf b = Unpooled.buffer(256);
        b.writeByte(0x88);
        literal(b, "content-type", "application/grpc");
        literal(b, "grpc-status", "14");
        literal(b, "grpc-message", MESSAGE);
        return b;
    }

    private static void literal(ByteBuf b, String name, String value) {
        b.writeByte(0x00);
        hpackString(b, name);
        hpackString(b, value);
    }

    private static void hpackString(ByteBuf b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        int len = bytes.length;
        if (len < 127) {
            b.writeByte(len);
        } else {
            b.writeByte(127);
            len -= 127;
            while (len >= 128) {
                b.writeByte((len & 0x7f) | 0x80);
                len >>>= 7;
            }
            b.writeByte(len);
        }
        b.writeBytes(bytes);
    }
}
