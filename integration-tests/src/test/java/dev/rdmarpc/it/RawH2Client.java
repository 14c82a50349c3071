package dev.rdmarpc.it;

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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A hostile HTTP/2 client over a plain socket: frames are encoded by Netty's frame writer (HPACK included) into bytes
 * this class sends as it likes; what the server answers is read back as raw frames until it closes.
 */
final class RawH2Client implements AutoCloseable {
    static final int DATA = 0x0;
    static final int HEADERS = 0x1;
    static final int RST_STREAM = 0x3;
    static final int SETTINGS = 0x4;
    static final int PING = 0x6;
    static final int GOAWAY = 0x7;
    static final int CONTINUATION = 0x9;

    /** One frame the server sent. */
    record Frame(int type, int flags, int streamId, byte[] payload) {
        /** GOAWAY's error code. */
        int goAwayError() {
            return ((payload[4] & 0xff) << 24) | ((payload[5] & 0xff) << 16) | ((payload[6] & 0xff) << 8) | (payload[7] & 0xff);
        }

        String goAwayDebug() {
            return new String(payload, 8, payload.length - 8, StandardCharsets.UTF_8);
        }
    }

    final Socket socket;
    private final OutputStream out;
    private final EmbeddedChannel encoder = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final ChannelHandlerContext ctx = encoder.pipeline().firstContext();
    final DefaultHttp2FrameWriter writer = new DefaultHttp2FrameWriter();
    /** Set when a read ended with a reset: the server closed while this client's bytes were still unread. */
    boolean resetByServer;

    /** Connects and sends the preface and an empty SETTINGS frame. */
    RawH2Client(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
        socket.setSoTimeout(60_000); // only ends a hung test
        out = socket.getOutputStream();
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        writer.writeSettings(ctx, new Http2Settings(), ctx.newPromise());
        flush();
    }

    /** The request headers of a gRPC call to {@code method} of {@link TestService}. */
    static Http2Headers request(String method) {
        return new DefaultHttp2Headers().method("POST").scheme("http").authority("localhost")
                .path("/" + TestService.NAME + "/" + method).add("content-type", "application/grpc").add("te", "trailers");
    }

    RawH2Client headers(int streamId, Http2Headers headers, boolean endStream) {
        writer.writeHeaders(ctx, streamId, headers, 0, endStream, ctx.newPromise());
        return this;
    }

    RawH2Client frame(int type, int streamId, int flags, byte[] payload) {
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

    /** Every frame the server sends until it closes the connection (a reset counts as the close). */
    List<Frame> framesUntilClosed() throws IOException {
        return framesUntil(f -> false);
    }

    /** The frames the server sends until one matches {@code last} (included) or it closes the connection. */
    List<Frame> framesUntil(java.util.function.Predicate<Frame> last) throws IOException {
        List<Frame> frames = new ArrayList<>();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        try {
            while (true) {
                int length = in.readUnsignedByte() << 16 | in.readUnsignedShort();
                int type = in.readUnsignedByte();
                int flags = in.readUnsignedByte();
                int stream = in.readInt() & 0x7fffffff;
                byte[] payload = new byte[length];
                in.readFully(payload);
                Frame f = new Frame(type, flags, stream, payload);
                frames.add(f);
                if (last.test(f)) {
                    return frames;
                }
            }
        } catch (EOFException e) {
            return frames;
        } catch (java.net.SocketException e) {
            resetByServer = true; // a reset may overtake (and discard) what the server sent before it
            return frames;
        }
    }

    @Override
    public void close() throws IOException {
        encoder.finishAndReleaseAll();
        socket.close();
    }
}
