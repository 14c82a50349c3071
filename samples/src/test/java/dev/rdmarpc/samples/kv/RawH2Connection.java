package dev.rdmarpc.samples.kv;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Flags;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;

/**
 * A hostile gRPC-over-HTTP/2 client of the KV server: frames encoded by Netty's frame writer (HPACK included) into
 * bytes written as this class likes, the server's frames read back raw, one by one, until it closes.
 */
final class RawH2Connection implements AutoCloseable {
    static final int DATA = 0x0;
    static final int HEADERS = 0x1;
    static final int RST_STREAM = 0x3;
    static final int SETTINGS = 0x4;
    static final int PING = 0x6;
    static final int GOAWAY = 0x7;
    static final int WINDOW_UPDATE = 0x8;
    static final int CONTINUATION = 0x9;
    static final int ENHANCE_YOUR_CALM = 0xb;

    /** One frame the server sent. */
    record Frame(int type, int flags, int streamId, byte[] payload) {
        int goAwayError() {
            return ByteBuffer.wrap(payload, 4, 4).getInt();
        }

        String goAwayDebug() {
            return new String(payload, 8, payload.length - 8, StandardCharsets.UTF_8);
        }

        boolean isSettingsAck() {
            return type == SETTINGS && (flags & 1) != 0;
        }
    }

    private final Socket socket = new Socket();
    private final OutputStream out;
    private final DataInputStream in;
    private final EmbeddedChannel encoder = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final ChannelHandlerContext ctx = encoder.pipeline().firstContext();
    private final DefaultHttp2FrameWriter writer = new DefaultHttp2FrameWriter();

    /** Connects and sends the preface and {@code settings}; {@code receiveBuffer} > 0 makes the receive buffer that small. */
    RawH2Connection(int port, Http2Settings settings, int receiveBuffer) throws IOException {
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
        socket.setSoTimeout(60_000); // only ends a hung test
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        writer.writeSettings(ctx, settings, ctx.newPromise());
        flush();
    }

    /** Connects with empty SETTINGS (the protocol's defaults). */
    static RawH2Connection open(int port) throws IOException {
        return new RawH2Connection(port, new Http2Settings(), 0);
    }

    /** The request headers of a gRPC call to the KV service's {@code method}. */
    static Http2Headers request(String method) {
        return new DefaultHttp2Headers().method("POST").scheme("http").authority("localhost")
                .path("/rdmarpc.samples.kv.KeyValue/" + method).add("content-type", "application/grpc").add("te", "trailers");
    }

    /** A gRPC message: the 1-byte compressed flag (0), its 4-byte big-endian length, its bytes. */
    static byte[] grpcMessage(byte[] body) {
        return ByteBuffer.allocate(5 + body.length).put((byte) 0).putInt(body.length).put(body).array();
    }

    RawH2Connection headers(int streamId, Http2Headers headers, boolean endStream) {
        writer.writeHeaders(ctx, streamId, headers, 0, endStream, ctx.newPromise());
        return this;
    }

    RawH2Connection data(int streamId, byte[] bytes, boolean endStream) {
        writer.writeData(ctx, streamId, Unpooled.wrappedBuffer(bytes), 0, endStream, ctx.newPromise());
        return this;
    }

    RawH2Connection windowUpdate(int streamId, int increment) {
        return frame(WINDOW_UPDATE, streamId, 0, ByteBuffer.allocate(4).putInt(increment).array());
    }

    RawH2Connection rst(int streamId) {
        return frame(RST_STREAM, streamId, 0, new byte[]{0, 0, 0, 8}); // CANCEL
    }

    RawH2Connection ping(long data) {
        return frame(PING, 0, 0, ByteBuffer.allocate(8).putLong(data).array());
    }

    /** An empty SETTINGS frame (the server answers each with an ACK). */
    RawH2Connection settings() {
        writer.writeSettings(ctx, new Http2Settings(), ctx.newPromise());
        return this;
    }

    /** Writes bytes as they are, around the frame writer. */
    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    RawH2Connection frame(int type, int streamId, int flags, byte[] payload) {
        writer.writeFrame(ctx, (byte) type, streamId, new Http2Flags((short) flags), Unpooled.wrappedBuffer(payload), ctx.newPromise());
        return this;
    }

    /** Sends what was written since the last flush. */
    void flush() throws IOException {
        encoder.flushOutbound();
        ByteBuf b;
        while ((b = encoder.readOutbound()) != null) {
            try {
                byte[] bytes = new byte[b.readableBytes()];
                b.readBytes(bytes);
                out.write(bytes);
            } finally {
                b.release();
            }
        }
        out.flush();
    }

    /** Flushes, and returns false instead of failing when the server has closed the connection meanwhile. */
    boolean tryFlush() {
        try {
            flush();
            return true;
        } catch (IOException closed) {
            return false;
        }
    }

    /** The next frame, or null once the server has closed the connection. */
    Frame read() throws IOException {
        try {
            int length = in.readUnsignedByte() << 16 | in.readUnsignedShort();
            int type = in.readUnsignedByte();
            int flags = in.readUnsignedByte();
            int stream = in.readInt() & 0x7fffffff;
            byte[] payload = new byte[length];
            in.readFully(payload);
            return new Frame(type, flags, stream, payload);
        } catch (EOFException | SocketException e) {
            return null; // closed, or reset: a reset may overtake (and discard) what the server sent before it
        }
    }

    /** Reads until a frame matches and returns it; null if the server closes the connection first. */
    Frame readUntil(Predicate<Frame> wanted) throws IOException {
        for (Frame f = read(); f != null; f = read()) {
            if (wanted.test(f)) {
                return f;
            }
        }
        return null;
    }

    /**
     * Sends an empty SETTINGS and reads until its ACK: the server has handled every frame sent before it (a SETTINGS,
     * unlike a PING, is not held against the client by the server's keepalive enforcement). Null if it closed first.
     */
    Frame sync(Predicate<Frame> also) throws IOException {
        settings().flush();
        return readUntil(f -> f.isSettingsAck() || !also.test(f));
    }

    @Override
    public void close() throws IOException {
        encoder.finishAndReleaseAll();
        socket.close();
    }
}
