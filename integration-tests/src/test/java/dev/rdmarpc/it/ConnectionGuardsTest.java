package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guards a server (and a client) keeps on each connection, driven by raw sockets on loopback: the control-frame
 * budget, keepalive after HELLO, frames for streams never opened, and HEADERS/TRAILERS within the peer's max frame.
 * Each closes only the offending connection; a proper client on another connection keeps working.
 */
class ConnectionGuardsTest {
    private static final String SIZED = "guards.Sized";
    private static final MethodDescriptor<byte[], byte[]> LONG_DESCRIPTION = sized("LongDescription");
    private static final MethodDescriptor<byte[], byte[]> BIG_TRAILERS = sized("BigTrailers");
    private static final MethodDescriptor<byte[], byte[]> BIG_HEADERS = sized("BigHeaders");
    private static final String FIVE_KIB = "key not found: " + "k".repeat(5 * 1024);
    private static final Metadata.Key<String> BIG = Metadata.Key.ascii("x-big");

    private final Queue<String> closedReasons = new ConcurrentLinkedQueue<>();
    private final Queue<PeerConnection> opened = new ConcurrentLinkedQueue<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Socket> sockets = new ArrayList<>();
    private TestService service;
    private RpcServer server;
    private RpcChannel channel;
    private long baseline;

    private static MethodDescriptor<byte[], byte[]> sized(String name) {
        return MethodDescriptor.create(SIZED + "/" + name, MethodDescriptor.MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    }

    /** Methods that end with more than a 1 KiB frame holds: a long description, big trailers, big headers. */
    private static ServiceDefinition sizedService() {
        return ServiceDefinition.builder(SIZED)
                .addMethod(LONG_DESCRIPTION, (call, headers) -> closeOnHalfClose(call, c ->
                        c.close(Status.NOT_FOUND.withDescription(FIVE_KIB), new Metadata())))
                .addMethod(BIG_TRAILERS, (call, headers) -> closeOnHalfClose(call, c -> {
                    Metadata md = new Metadata();
                    md.put(BIG, "t".repeat(2000));
                    c.close(Status.OK, md);
                }))
                .addMethod(BIG_HEADERS, (call, headers) -> closeOnHalfClose(call, c -> {
                    Metadata md = new Metadata();
                    md.put(BIG, "h".repeat(2000));
                    c.sendHeaders(md);
                    c.close(Status.OK, new Metadata());
                }))
                .build();
    }

    private static ServerCall.Listener<byte[]> closeOnHalfClose(ServerCall<byte[], byte[]> call,
                                                               java.util.function.Consumer<ServerCall<byte[], byte[]>> end) {
        call.request(1);
        return new ServerCall.Listener<>() {
            @Override
            public void onHalfClose() {
                if (!call.isCancelled()) {
                    end.accept(call);
                }
            }
        };
    }

    @BeforeEach
    void baseline() {
        baseline = SlabPool.shared().inUseBuffers();
    }

    private void start(UnaryOperator<RpcServer.Builder> config) throws IOException {
        service = new TestService();
        RpcServer.Builder b = RpcServer.forPort(0).addService(service.definition()).addService(sizedService())
                .meterRegistry(registry)
                .connectionListener(new PeerConnectionListener() {
                    @Override
                    public void connectionOpened(PeerConnection connection) {
                        opened.add(connection);
                    }

                    @Override
                    public void connectionClosed(PeerConnection connection, String reason) {
                        closedReasons.add(reason);
                    }
                });
        server = config.apply(b).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    // ------------------------------------------------------------------ raw frames

    /** One frame as read from the socket. */
    private record Frame(int type, int flags, int stream, int credit, byte[] payload) {
        MemorySegment segment() {
            return MemorySegment.ofArray(payload);
        }
    }

    private static byte[] frame(int type, int flags, int stream, int credit, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(payload.length).put((byte) type).put((byte) flags).putShort((short) 0).putInt(stream).putInt(credit).put(payload);
        return b.array();
    }

    private static byte[] hello(int maxFramePayload) {
        ByteBuffer p = ByteBuffer.allocate(4 + 2 + 2 + 4 + 4 + 4 + 2).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(Hello.MAGIC).putShort((short) Hello.VERSION).putShort((short) 0).putInt(1 << 20).putInt(maxFramePayload)
                .putInt(4 << 20).putShort((short) 0);
        return frame(FrameType.HELLO, 0, 0, 0, p.array());
    }

    private static byte[] ping(long data) {
        return frame(FrameType.PING, 0, 0, 0, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(data).array());
    }

    private static byte[] bytesOf(SlabBuffer b) {
        try {
            return b.segment().asSlice(0, b.length()).toArray(ValueLayout.JAVA_BYTE);
        } finally {
            b.release();
        }
    }

    private static byte[] headers(int stream, String path) {
        return bytesOf(Frames.requestHeaders(SlabPool.shared(), stream, false, path, "localhost", 0, null));
    }

    /** A whole one-frame message with END_STREAM: the request of a unary call. */
    private static byte[] lastMessage(int stream, byte[] body) {
        ByteBuffer p = ByteBuffer.allocate(4 + body.length).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).put(body);
        return frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END | FrameFlags.END_STREAM, stream, 0, p.array());
    }

    private static byte[] cancel(int stream) {
        return bytesOf(Frames.cancel(SlabPool.shared(), stream, Status.CANCELLED.withDescription("late")));
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    /** A raw client connection: write bytes, read frames. */
    private final class Raw {
        private final Socket socket = new Socket();
        private final DataInputStream in;
        private final OutputStream out;

        Raw(int port) throws IOException {
            sockets.add(socket);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
            socket.setSoTimeout(60_000); // only ends a hung test
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        /** Sends HELLO with this max frame payload and reads the server's. */
        Raw handshake(int maxFramePayload) throws IOException {
            write(hello(maxFramePayload));
            Frame h = read();
            assertNotNull(h, "the server answered HELLO");
            assertEquals(FrameType.HELLO, h.type());
            return this;
        }

        void write(byte[]... parts) throws IOException {
            out.write(concat(parts));
            out.flush();
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
                return null; // closed (or reset) by the server
            }
        }

        /** Reads until a frame matches; fails if the connection closes first. */
        Frame readUntil(Predicate<Frame> wanted, String what) throws IOException {
            for (Frame f = read(); f != null; f = read()) {
                if (wanted.test(f)) {
                    return f;
                }
            }
            throw new AssertionError("the server closed the connection before " + what);
        }

        /** Reads until the server closes; returns the frames read. */
        List<Frame> readToEnd() throws IOException {
            List<Frame> frames = new ArrayList<>();
            for (Frame f = read(); f != null; f = read()) {
                frames.add(f);
            }
            return frames;
        }
    }

    private String awaitCloseReason(String expected) {
        Await.until(() -> closedReasons.stream().anyMatch(r -> r.contains(expected)),
                () -> "a connection closed with a reason containing '" + expected + "', reasons: " + closedReasons);
        return closedReasons.stream().filter(r -> r.contains(expected)).findFirst().orElseThrow();
    }

    private void assertGoodClientWorks() {
        byte[] ok = Bytes.pattern(33, 7);
        assertArrayEquals(ok, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, ok),
                "a proper client on another connection keeps working");
    }

    private double counter(String name, String... tags) {
        var c = registry.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    // ------------------------------------------------------------------ control-frame budget

    @Test
    void aPingFloodClosesThatConnectionOnly() throws IOException {
        start(b -> b.controlFrameLimit(10, 10));
        assertGoodClientWorks();
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        byte[][] pings = new byte[5000][];
        for (int i = 0; i < pings.length; i++) {
            pings[i] = ping(i);
        }
        raw.write(pings);
        // the close may come as a reset (the flood is still unread), so how many ACKs arrive before it varies
        List<Frame> answered = raw.readToEnd();
        assertTrue(answered.size() < pings.length, "the flood was not answered: " + answered.size() + " ACKs");
        String reason = awaitCloseReason("too many control frames");
        assertTrue(reason.contains("10/s with a burst of 10"), reason);
        assertGoodClientWorks();
        Await.until(() -> server.connectionCount() == 1, () -> "only the flooding connection closed: " + server.connectionCount());
        assertEquals(1.0, counter("rdmarpc.server.connections.closed", "reason", "control-frames"));
    }

    @Test
    void emptyWindowFramesOnStreamZeroCountAsControlFrames() throws IOException {
        start(b -> b.controlFrameLimit(10, 10));
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        byte[][] windows = new byte[1000][];
        for (int i = 0; i < windows.length; i++) {
            windows[i] = frame(FrameType.WINDOW, 0, 0, 0, new byte[0]);
        }
        raw.write(windows);
        raw.readToEnd();
        assertTrue(awaitCloseReason("too many control frames").contains("WINDOW on stream 0"));
        assertGoodClientWorks();
    }

    @Test
    void lateFramesForAFinishedStreamAreIgnoredAndTheConnectionStays() throws IOException {
        start(b -> b);
        Raw raw = afterOneFinishedCall();
        // the client's CANCEL and WINDOW crossed the TRAILERS: dropped, the connection carries on (an END_STREAM would
        // not be late but wrong: the client half-closed the stream with its request)
        raw.write(cancel(1), frame(FrameType.WINDOW, 0, 1, 4096, new byte[0]), ping(42));
        Frame ack = raw.readUntil(f -> f.type() == FrameType.PING, "the PING's ACK");
        assertEquals(FrameFlags.ACK, ack.flags());
        raw.write(headers(3, TestService.ECHO.getFullMethodName()), lastMessage(3, new byte[]{9}));
        Frame t3 = raw.readUntil(f -> f.type() == FrameType.TRAILERS && f.stream() == 3, "the second call's TRAILERS");
        assertEquals(Status.Code.OK, Frames.decodeTrailers(t3.segment()).status().getCode());
        assertTrue(closedReasons.isEmpty(), closedReasons::toString);
    }

    /** Opens stream 1 with an ECHO call and reads its TRAILERS: from then on stream 1 has ended on the server. */
    private Raw afterOneFinishedCall() throws IOException {
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        raw.write(headers(1, TestService.ECHO.getFullMethodName()), lastMessage(1, new byte[]{1}));
        Frame t = raw.readUntil(f -> f.type() == FrameType.TRAILERS && f.stream() == 1, "the call's TRAILERS");
        assertEquals(Status.Code.OK, Frames.decodeTrailers(t.segment()).status().getCode());
        return raw;
    }

    private static byte[][] repeat(byte[] frame, int times) {
        byte[][] all = new byte[times][];
        java.util.Arrays.fill(all, frame);
        return all;
    }

    @Test
    void lateFramesBeyondTwoPerStreamAreCharged() throws IOException {
        start(b -> b.controlFrameLimit(10, 10));
        Raw raw = afterOneFinishedCall();
        raw.write(repeat(cancel(1), 1000));
        raw.readToEnd();
        assertTrue(awaitCloseReason("too many control frames").contains("a frame for stream 1, which has ended"));
        assertGoodClientWorks();
    }

    @Test
    void emptyMessageContinuationsAreCharged() throws IOException {
        start(b -> b.controlFrameLimit(10, 10));
        // a stream the client never half-closed (after END_STREAM a MESSAGE is a protocol error, not a charge): its
        // method does not exist, so the server answers it at once
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        raw.write(headers(1, "no.Such/Method"));
        Frame t = raw.readUntil(f -> f.type() == FrameType.TRAILERS && f.stream() == 1, "the call's TRAILERS");
        assertEquals(Status.Code.UNIMPLEMENTED, Frames.decodeTrailers(t.segment()).status().getCode());
        raw.write(repeat(frame(FrameType.MESSAGE, 0, 1, 0, new byte[0]), 1000));
        raw.readToEnd();
        assertTrue(awaitCloseReason("too many control frames").contains("an empty MESSAGE continuation on stream 1"));
        assertGoodClientWorks();
    }

    // ------------------------------------------------------------------ streams never opened

    private void expectClosedFor(byte[] bytes, String reason) throws IOException {
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        raw.write(bytes);
        raw.readToEnd();
        awaitCloseReason(reason);
    }

    @Test
    void framesForAStreamNeverOpenedCloseTheConnection() throws IOException {
        start(b -> b);
        byte[] open = concat(headers(1, TestService.ECHO.getFullMethodName()), lastMessage(1, new byte[]{1}));
        expectClosedFor(concat(open, frame(FrameType.WINDOW, 0, 3, 100, new byte[0])),
                "WINDOW for stream 3, which the client never opened (the last stream it opened is 1)");
        expectClosedFor(concat(open, frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END, 5, 0, new byte[4])),
                "MESSAGE for stream 5, which the client never opened");
        expectClosedFor(concat(open, cancel(7)), "CANCEL for stream 7, which the client never opened");
        expectClosedFor(cancel(1), "CANCEL for stream 1, which the client never opened (the last stream it opened is 0)");
        expectClosedFor(concat(open, cancel(2)), "CANCEL for stream 2, which the client never opened");
        assertGoodClientWorks();
        Await.until(() -> server.connectionCount() == 1, () -> "only the bad connections closed: " + server.connectionCount());
    }

    @Test
    void headersThatSkipAStreamIdCloseTheConnection() throws IOException {
        start(b -> b);
        expectClosedFor(concat(headers(1, TestService.ECHO.getFullMethodName()), headers(5, TestService.ECHO.getFullMethodName())),
                "HEADERS opens stream 5, but the next stream id on this connection is 3");
        expectClosedFor(headers(3, TestService.ECHO.getFullMethodName()), "HEADERS opens stream 3, but the next stream id on this connection is 1");
        assertGoodClientWorks();
    }

    @Test
    void aWindowGrantingNothingIsAProtocolError() throws IOException {
        start(b -> b);
        expectClosedFor(concat(headers(1, TestService.HANG.getFullMethodName()), frame(FrameType.WINDOW, 0, 1, 0, new byte[0])),
                "WINDOW on stream 1 grants 0 bytes (must be positive)");
        assertGoodClientWorks();
    }

    // ------------------------------------------------------------------ frames after END_STREAM, metadata lengths

    /** A HANG call (answered never) the client has half-closed: the stream stays half-closed on the server. */
    private static byte[] halfClosedHang() {
        return concat(headers(1, TestService.HANG.getFullMethodName()), lastMessage(1, new byte[]{1}));
    }

    @Test
    void framesAfterTheClientsEndStreamCloseTheConnection() throws IOException {
        start(b -> b);
        expectClosedFor(concat(halfClosedHang(), frame(FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END, 1, 0, new byte[4])),
                "MESSAGE after END_STREAM on stream 1");
        expectClosedFor(concat(halfClosedHang(), frame(FrameType.END_STREAM, 0, 1, 0, new byte[0])),
                "END_STREAM after END_STREAM on stream 1");
        expectClosedFor(concat(halfClosedHang(), bytesOf(Frames.trailers(SlabPool.shared(), 1, Status.OK, null))),
                "unexpected TRAILERS frame from a client");
        expectClosedFor(concat(halfClosedHang(), headers(1, TestService.HANG.getFullMethodName())),
                "HEADERS opens stream 1, but the next stream id on this connection is 3");
        // half-closed by the HEADERS' own END_STREAM flag
        byte[] openedHalfClosed = bytesOf(Frames.requestHeaders(SlabPool.shared(), 1, true, TestService.HANG.getFullMethodName(),
                "localhost", 0, null));
        expectClosedFor(concat(openedHalfClosed, lastMessage(1, new byte[]{1})), "MESSAGE after END_STREAM on stream 1");
        assertGoodClientWorks();
        Await.until(() -> server.connectionCount() == 1, () -> "only the bad connections closed: " + server.connectionCount());
    }

    @Test
    void aMetadataLengthRunningPastTheFrameIsMalformed() throws IOException {
        start(b -> b);
        // HEADERS for stream 1 whose one metadata value declares 2^31-1 bytes and carries 8
        byte[] path = TestService.ECHO.getFullMethodName().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        ByteBuffer p = ByteBuffer.allocate(8 + 2 + path.length + 2 + 2 + 2 + 5 + 4 + 8).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(0).putShort((short) path.length).put(path).putShort((short) 0).putShort((short) 1)
                .putShort((short) 5).put("x-big".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(Integer.MAX_VALUE)
                .put(new byte[8]);
        expectClosedFor(frame(FrameType.HEADERS, 0, 1, 0, p.array()), "truncated HEADERS payload");
        assertGoodClientWorks();
        assertEquals(0.0, counter("rdmarpc.server.limit.refusals", "limit", "metadata_size"), "malformed, not too large");
    }

    // ------------------------------------------------------------------ keepalive

    @Test
    void aConnectionThatNeverAnswersIsPingedThenClosed() throws IOException {
        start(b -> b.keepAliveTime(Duration.ofMillis(200)).keepAliveTimeout(Duration.ofMillis(200)));
        Raw raw = new Raw(server.getPort()).handshake(1 << 20);
        List<Frame> frames = raw.readToEnd(); // answers nothing
        assertTrue(frames.stream().anyMatch(f -> f.type() == FrameType.PING && f.flags() == 0),
                "the server sent a keepalive PING before closing: " + frames);
        String reason = awaitCloseReason("keepalive: no frames for ");
        assertTrue(reason.contains("was not answered within 200 ms"), reason);
        assertEquals(1.0, counter("rdmarpc.server.connections.closed", "reason", "keepalive"));
        assertGoodClientWorks();
    }

    @Test
    void anIdleClientThatAnswersPingsKeepsItsConnection() throws Exception {
        start(b -> b.keepAliveTime(Duration.ofMillis(200)).keepAliveTimeout(Duration.ofMillis(200)));
        assertGoodClientWorks();
        Await.until(() -> counter("rdmarpc.server.keepalive.acks") >= 3,
                () -> "three keepalive PINGs acknowledged, not " + counter("rdmarpc.server.keepalive.acks"));
        assertGoodClientWorks();
        assertEquals(1, opened.size(), "both calls went over the one connection");
        assertTrue(closedReasons.isEmpty(), closedReasons::toString);
        assertEquals(1, server.connectionCount());
    }

    // ------------------------------------------------------------------ frame sizes

    private Trailers callWith1KiBFrames(String path) throws IOException {
        Raw raw = new Raw(server.getPort()).handshake(1024);
        raw.write(headers(1, path), lastMessage(1, new byte[]{1}));
        Frame t = raw.readUntil(f -> f.type() == FrameType.TRAILERS && f.stream() == 1, "TRAILERS");
        assertTrue(t.payload().length <= 1024, "TRAILERS of " + t.payload().length + " bytes to a client that accepts 1024");
        return Frames.decodeTrailers(t.segment());
    }

    @Test
    void aLongStatusDescriptionIsCutToTheClientsMaxFrame() throws IOException {
        start(b -> b);
        Trailers t = callWith1KiBFrames(LONG_DESCRIPTION.getFullMethodName());
        assertEquals(Status.Code.NOT_FOUND, t.status().getCode());
        String d = t.status().getDescription();
        assertTrue(d.startsWith("key not found: kkk") && d.endsWith("…"), d);
        Trailers unknown = callWith1KiBFrames("no.Such/" + "m".repeat(3000));
        assertEquals(Status.Code.UNIMPLEMENTED, unknown.status().getCode());
        assertTrue(unknown.status().getDescription().startsWith("Method not found: no.Such/mmm"), unknown.status().getDescription());
        assertTrue(unknown.status().getDescription().endsWith("…"), unknown.status().getDescription());
    }

    @Test
    void trailersWhoseMetadataCannotFitBecomeInternal() throws IOException {
        start(b -> b);
        Trailers t = callWith1KiBFrames(BIG_TRAILERS.getFullMethodName());
        assertEquals(Status.Code.INTERNAL, t.status().getCode());
        assertTrue(t.status().getDescription().matches("trailers of \\d+ bytes exceed the peer's max frame size 1024"),
                t.status().getDescription());
        assertEquals(0, t.metadata().keys().size(), "the metadata is dropped");
    }

    @Test
    void responseHeadersTooLargeForTheClientFailTheCall() throws IOException {
        start(b -> b);
        Trailers t = callWith1KiBFrames(BIG_HEADERS.getFullMethodName());
        assertEquals(Status.Code.INTERNAL, t.status().getCode());
        assertTrue(t.status().getDescription().matches("response HEADERS of \\d+ bytes exceed the peer's max frame size 1024"),
                t.status().getDescription());
    }

    @Test
    void requestHeadersTooLargeForTheServerFailTheCallWithoutSendingIt() throws IOException {
        // a metadata limit above the frame size, so the frame size is what the HEADERS exceed
        start(b -> b.maxInboundMetadataSize(4 << 20));
        assertGoodClientWorks();
        Metadata md = new Metadata();
        md.put(BIG, "r".repeat((1 << 20) + 1));
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(
                channel, TestService.ECHO, CallOptions.DEFAULT.withHeaders(md), new byte[1]));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().matches(
                "request HEADERS of \\d+ bytes exceed the peer's max frame size 1048576 \\(the call was not sent\\)"),
                e.getStatus().getDescription());
        assertGoodClientWorks(); // the next call takes the next stream id: the server, which allows no gap, serves it
        assertEquals(1, opened.size(), "on the same connection");
        assertTrue(closedReasons.isEmpty(), closedReasons::toString);
        assertEquals(2, service.calls.get(), "the server saw only the two good calls");
    }

    // ------------------------------------------------------------------ the client's budget

    @Test
    void aClientClosesAConnectionOnWhichTheServerFloodsPings() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        try (ServerSocket fake = new ServerSocket(0)) {
            RpcChannel victim = RpcChannel.forAddress("127.0.0.1", fake.getLocalPort()).build();
            try {
                var pinged = victim.ping();
                try (Socket s = fake.accept()) {
                    s.setSoTimeout(60_000);
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    byte[] header = new byte[FrameHeader.SIZE];
                    in.readFully(header);
                    in.readFully(new byte[ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt()]); // its HELLO
                    byte[][] flood = new byte[20_001][];
                    flood[0] = hello(1 << 20);
                    for (int i = 1; i < flood.length; i++) {
                        flood[i] = ping(i);
                    }
                    try {
                        s.getOutputStream().write(concat(flood));
                    } catch (IOException closedWhileWriting) {
                        // the client may close before it has read everything
                    }
                    var failure = assertThrows(java.util.concurrent.ExecutionException.class, () -> pinged.get(60, TimeUnit.SECONDS));
                    Status st = Status.fromThrowable(failure.getCause());
                    assertEquals(Status.Code.UNAVAILABLE, st.getCode());
                    assertTrue(st.getDescription().contains("too many control frames"), st.getDescription());
                }
            } finally {
                victim.shutdownNow();
                victim.awaitTermination(60, TimeUnit.SECONDS);
            }
        }
    }
}
