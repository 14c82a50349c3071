package dev.rdmarpc.core.testing;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.Trailers;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An rdmarpc client that writes frames by hand over a plain socket, as a hostile client would: it sends what it
 * likes, ignoring windows unless it chooses not to. A reader thread (unless told not to read at all) takes the server's
 * frames, keeps the TRAILERS it sends (per stream) and the PING ACKs, and drops the rest.
 */
public final class RawFrameClient implements AutoCloseable {
    private final Socket socket = new Socket();
    private final OutputStream out;
    private final Thread reader;
    private final AtomicLong pingAcks = new AtomicLong();
    private final Queue<Trailers> trailers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    private long pingsSent;

    /**
     * Connects and sends a HELLO advertising {@code initialWindow} per stream; with {@code flow} it also carries that
     * {@link FlowCapability} block (null: the HELLO of a client that knows no connection window). With {@code read}
     * false the server's bytes are never read (not even its HELLO).
     */
    public RawFrameClient(int port, int initialWindow, FlowCapability flow, boolean read) throws IOException {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
        out = socket.getOutputStream();
        Map<Integer, byte[]> caps = flow == null ? Map.of() : Map.of(Hello.CAP_FLOW, flow.encode());
        write(bytes(Frames.hello(SlabPool.shared(), new Hello(Hello.VERSION, initialWindow, 1 << 20, 64 << 20, caps))));
        if (read) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            reader = Thread.ofPlatform().daemon().name("raw-frame-reader").start(() -> readAll(in));
        } else {
            reader = null;
        }
    }

    private void readAll(DataInputStream in) {
        byte[] header = new byte[FrameHeader.SIZE];
        try {
            while (true) {
                in.readFully(header);
                ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                int len = h.getInt();
                int type = h.get() & 0xff;
                int flags = h.get() & 0xff;
                byte[] payload = new byte[len];
                in.readFully(payload);
                if (type == FrameType.TRAILERS) {
                    trailers.add(Frames.decodeTrailers(MemorySegment.ofArray(payload)));
                } else if (type == FrameType.PING && (flags & FrameFlags.ACK) != 0) {
                    pingAcks.incrementAndGet();
                }
            }
        } catch (IOException e) {
            closed = true;
        }
    }

    /** Writes {@code frames} as one write (it blocks while the server does not read). */
    public void write(byte[]... frames) throws IOException {
        int n = 0;
        for (byte[] f : frames) {
            n += f.length;
        }
        ByteBuffer all = ByteBuffer.allocate(n);
        for (byte[] f : frames) {
            all.put(f);
        }
        out.write(all.array());
        out.flush();
    }

    /** Sends a PING and waits for its ACK: the server has handled every frame written before it. */
    public void sync() throws IOException {
        long n = ++pingsSent;
        write(bytes(Frames.ping(SlabPool.shared(), n, false)));
        Await.until(() -> pingAcks.get() >= n || closed, () -> "the server acknowledged PING " + n);
    }

    /** The TRAILERS the server sent so far. */
    public Queue<Trailers> trailers() {
        return trailers;
    }

    /** How many TRAILERS the server sent with {@code code}. */
    public long trailersWith(Status.Code code) {
        return trailers.stream().filter(t -> t.status().getCode() == code).count();
    }

    /** Whether the server closed the connection (seen by the reader). */
    public boolean closedByServer() {
        return closed;
    }

    @Override
    public void close() throws IOException {
        socket.close();
        if (reader != null) {
            try {
                reader.join(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- frames ----

    /** The bytes of a frame core encoded; releases it. */
    public static byte[] bytes(SlabBuffer b) {
        try {
            return b.segment().asSlice(0, b.length()).toArray(ValueLayout.JAVA_BYTE);
        } finally {
            b.release();
        }
    }

    /** A frame with this header and payload. */
    public static byte[] frame(int type, int flags, int stream, int credit, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload.length).put((byte) type).put((byte) flags).putShort((short) 0).putInt(stream).putInt(credit).put(payload);
        return b.array();
    }

    /** HEADERS opening {@code stream} for the method {@code path} ("service/method"). */
    public static byte[] headers(int stream, String path) {
        return bytes(Frames.requestHeaders(SlabPool.shared(), stream, false, path, "localhost", 0, null));
    }

    /** A MESSAGE BEGIN frame announcing {@code total} bytes and carrying the first {@code data} of them (zeros). */
    public static byte[] begin(int stream, int flags, long total, int data) {
        byte[] p = new byte[4 + data];
        ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN).putInt((int) total);
        return frame(FrameType.MESSAGE, FrameFlags.BEGIN | flags, stream, 0, p);
    }

    /** A whole message {@code body} in one MESSAGE frame, with {@code flags} beside BEGIN and END. */
    public static byte[] message(int stream, int flags, byte[] body) {
        byte[] p = new byte[4 + body.length];
        ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).put(body);
        return frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END | flags, stream, 0, p);
    }

    /** A MESSAGE continuation carrying {@code data} more bytes (zeros). */
    public static byte[] more(int stream, int flags, int data) {
        return frame(FrameType.MESSAGE, flags, stream, 0, new byte[data]);
    }

    /** {@code count} empty messages on {@code stream}, each a whole 4-byte MESSAGE frame, as one byte array. */
    public static byte[] emptyMessages(int stream, int count) {
        byte[] one = begin(stream, FrameFlags.END, 0, 0);
        byte[] all = new byte[one.length * count];
        for (int i = 0; i < count; i++) {
            System.arraycopy(one, 0, all, i * one.length, one.length);
        }
        return all;
    }
}
