package dev.rdmarpc.samples.kv;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.Trailers;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A hostile rdmarpc client: frames encoded with core's own encoders (or by hand where a client should never send
 * them) and written as this class likes, the server's frames read back one by one until it closes.
 */
final class RawKvConnection implements AutoCloseable {
    static final String PUT = "rdmarpc.samples.kv.KeyValue/Put";
    static final String GET = "rdmarpc.samples.kv.KeyValue/Get";
    static final String SCAN = "rdmarpc.samples.kv.KeyValue/Scan";
    static final String BATCH_PUT = "rdmarpc.samples.kv.KeyValue/BatchPut";

    /** One frame the server sent. */
    record Frame(int type, int flags, int stream, int credit, byte[] payload) {
        Trailers trailers() {
            return Frames.decodeTrailers(MemorySegment.ofArray(payload));
        }

        boolean isPingAck(long data) {
            return type == FrameType.PING && (flags & FrameFlags.ACK) != 0
                    && Frames.decodePing(MemorySegment.ofArray(payload)) == data;
        }
    }

    final Socket socket = new Socket();
    private final OutputStream out;
    private final DataInputStream in;

    /** Connects; {@code receiveBuffer} > 0 makes the socket's receive buffer that small (a client that reads little). */
    RawKvConnection(int port, int receiveBuffer) throws IOException {
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
        socket.setSoTimeout(60_000); // only ends a hung test
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
    }

    /** Connects, sends a HELLO with this window and a 1 MiB max frame, and reads the server's HELLO. */
    static RawKvConnection open(int port, int initialWindow) throws IOException {
        RawKvConnection c = new RawKvConnection(port, 0);
        c.handshake(initialWindow);
        return c;
    }

    void handshake(int initialWindow) throws IOException {
        write(hello(initialWindow, Map.of()));
        Frame h = read();
        assertEquals(FrameType.HELLO, h == null ? -1 : h.type(), "the server answers HELLO");
    }

    // ------------------------------------------------------------------ frames

    static byte[] bytesOf(SlabBuffer b) {
        try {
            return b.segment().asSlice(0, b.length()).toArray(ValueLayout.JAVA_BYTE);
        } finally {
            b.release();
        }
    }

    static byte[] frame(int type, int flags, int stream, int credit, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload.length).put((byte) type).put((byte) flags).putShort((short) 0).putInt(stream).putInt(credit).put(payload);
        return b.array();
    }

    static byte[] hello(int initialWindow, Map<Integer, byte[]> capabilities) {
        return bytesOf(Frames.hello(SlabPool.shared(), new Hello(Hello.VERSION, initialWindow, 1 << 20, 64 << 20, capabilities)));
    }

    static byte[] headers(int stream, String path, Metadata md) {
        return bytesOf(Frames.requestHeaders(SlabPool.shared(), stream, false, path, "localhost", 0, md));
    }

    /** A whole message in one frame; with {@code endStream} the client's last. */
    static byte[] message(int stream, byte[] body, boolean endStream) {
        ByteBuffer p = ByteBuffer.allocate(4 + body.length).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).put(body);
        return frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END | (endStream ? FrameFlags.END_STREAM : 0), stream, 0,
                p.array());
    }

    /** The first frame of a message announced as {@code length} bytes, carrying {@code first} of them. */
    static byte[] messageStart(int stream, int length, byte[] first) {
        ByteBuffer p = ByteBuffer.allocate(4 + first.length).order(ByteOrder.LITTLE_ENDIAN).putInt(length).put(first);
        return frame(FrameType.MESSAGE, FrameFlags.BEGIN, stream, 0, p.array());
    }

    /** A continuation of a message begun earlier (no flags: neither BEGIN nor END). */
    static byte[] messageMore(int stream, byte[] bytes) {
        return frame(FrameType.MESSAGE, 0, stream, 0, bytes);
    }

    static byte[] cancel(int stream) {
        return bytesOf(Frames.cancel(SlabPool.shared(), stream, Status.CANCELLED.withDescription("changed my mind")));
    }

    static byte[] window(int stream, int increment) {
        return frame(FrameType.WINDOW, 0, stream, increment, new byte[0]);
    }

    static byte[] ping(long data) {
        return bytesOf(Frames.ping(SlabPool.shared(), data, false));
    }

    static byte[] goAway() {
        return bytesOf(Frames.goAway(SlabPool.shared(), 0, Status.OK.withDescription("bye")));
    }

    /** {@code times} copies of {@code frame} in one array. */
    static byte[] repeat(byte[] frame, int times) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(frame.length * times);
        for (int i = 0; i < times; i++) {
            b.writeBytes(frame);
        }
        return b.toByteArray();
    }

    // ------------------------------------------------------------------ I/O

    void write(byte[]... parts) throws IOException {
        for (byte[] p : parts) {
            out.write(p);
        }
        out.flush();
    }

    /** Writes, and returns false instead of failing when the server has closed the connection meanwhile. */
    boolean tryWrite(byte[]... parts) {
        try {
            write(parts);
            return true;
        } catch (IOException closed) {
            return false;
        }
    }

    /** The next frame, or null once the server has closed the connection. */
    Frame read() throws IOException {
        byte[] header = new byte[FrameHeader.SIZE];
        try {
            in.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
            int len = h.getInt();
            int type = h.get() & 0xff;
            int flags = h.get() & 0xff;
            h.getShort();
            int stream = h.getInt();
            int credit = h.getInt();
            byte[] payload = new byte[len];
            in.readFully(payload);
            return new Frame(type, flags, stream, credit, payload);
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

    /** Sends a PING and reads until its ACK: every frame the server handled before the PING has been answered. */
    boolean sync(long data) throws IOException {
        write(ping(data));
        return readUntil(f -> f.isPingAck(data)) != null;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
