package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.protocol.WireWriter;
import dev.rdmarpc.core.testing.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The server's limits, driven over real sockets: concurrent streams per connection (advertised in HELLO, respected by
 * the client, enforced on a client that ignores it), metadata size, connections per server and the memory budget.
 */
class LimitsTest {
    /** How core's server words a stream refused over the concurrent-stream limit (grpc-compat's Refusals matches it). */
    private static final String STREAM_LIMIT_REFUSAL = "server refused the stream: too many concurrent streams on this connection";
    private static final Metadata.Key<String> BIG = Metadata.Key.ascii("x-big");

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private TestService service;
    private long baseline;

    @BeforeEach
    void recordBaseline() {
        baseline = SlabPool.shared().inUseBuffers();
        service = new TestService();
    }

    @AfterEach
    void closeAndCheckForLeaks() throws Exception {
        service.holdRelease.countDown();
        for (int i = toClose.size() - 1; i >= 0; i--) {
            AutoCloseable c = toClose.get(i);
            if (c instanceof RpcChannel ch) {
                ch.shutdownNow();
                ch.awaitTermination(60, TimeUnit.SECONDS);
            } else if (c instanceof RpcServer s) {
                s.shutdownNow();
                s.awaitTermination(60, TimeUnit.SECONDS);
            } else {
                c.close();
            }
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcServer start(RpcServer.Builder b) throws IOException {
        RpcServer s = b.addService(service.definition()).build().start();
        toClose.add(s);
        return s;
    }

    /** A channel to {@code s}, or the channel {@code configured} builds (then {@code s} may be null). */
    private RpcChannel channel(RpcServer s, RpcChannel.Builder... configured) {
        RpcChannel c = (configured.length > 0 ? configured[0] : RpcChannel.forAddress("127.0.0.1", s.getPort())).build();
        toClose.add(c);
        return c;
    }

    private RawClient raw(RpcServer s) throws IOException {
        RawClient r = new RawClient(s.getPort());
        toClose.add(r);
        return r;
    }

    private static Status statusOf(Throwable t) {
        Throwable c = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        return assertInstanceOf(StatusException.class, c).getStatus();
    }

    // ------------------------------------------------------------------ concurrent streams

    @Test
    void theServerAdvertisesItsLimitsInHello() throws IOException {
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(3).maxInboundMetadataSize(4096));
        RawClient r = raw(s);
        assertEquals(new LimitsCapability(3, 4096), LimitsCapability.of(r.serverHello), "no attachments unless enabled");
    }

    @Test
    void aClientIgnoringTheLimitHasExactlyTheExcessStreamsRefusedAndTheConnectionCarriesOn() throws IOException {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(3).meterRegistry(meters));
        RawClient r = raw(s);
        for (int id = 1; id <= 9; id += 2) {
            r.send(FrameType.HEADERS, 0, id, RawClient.headers(TestService.HOLD.getFullMethodName(), Map.of()));
        }
        Map<Integer, Trailers> refused = r.trailersUntilPingAck();
        assertEquals(List.of(7, 9), refused.keySet().stream().sorted().toList(), "the two streams beyond the limit of 3");
        for (Trailers t : refused.values()) {
            assertEquals(Status.Code.UNAVAILABLE, t.status().getCode());
            assertTrue(t.status().getDescription().startsWith(STREAM_LIMIT_REFUSAL), t.status().getDescription());
        }
        // a stream that ends frees its slot at once: the next HEADERS is served
        r.send(FrameType.CANCEL, 0, 1, RawPeer.status(Status.Code.CANCELLED, "done"));
        r.send(FrameType.HEADERS, 0, 11, RawClient.headers(TestService.HOLD.getFullMethodName(), Map.of()));
        r.send(FrameType.HEADERS, 0, 13, RawClient.headers(TestService.HOLD.getFullMethodName(), Map.of()));
        refused = r.trailersUntilPingAck();
        assertEquals(List.of(13), List.copyOf(refused.keySet()), "stream 11 took the slot stream 1 left, 13 is one too many");
        assertEquals(1, s.connectionCount(), "the connection is still open");
        assertEquals(0, service.holdCalls.get(), "no refused stream reached the application");
        assertEquals(3.0, meters.get("rdmarpc.server.limit.refusals").tag("limit", "concurrent_streams").counter().count());
    }

    @Test
    void aNativeClientAboveTheLimitWaitsForSlotsAndCompletesEveryCall() throws Exception {
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(2));
        RpcChannel c = channel(s);
        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(i)));
        }
        Await.until(() -> service.holdCalls.get() == 2, () -> "two calls at the server, not " + service.holdCalls.get());
        assertEquals(1, s.connectionCount(), "the calls share one connection");
        service.holdRelease.countDown();
        for (int i = 0; i < calls.size(); i++) {
            assertArrayEquals(Bytes.ofInt(i), calls.get(i).get(60, TimeUnit.SECONDS), "call " + i);
        }
        assertEquals(8, service.holdCalls.get());
        assertEquals(2, service.holdPeak.get(), "never more calls at once than the server allows");
    }

    @Test
    void aSlotAQueuedCallCannotUseOpensTheNextWaitingCallUnderNoOtherCallsLock() throws Exception {
        // a metadata limit above the frame size: the queued call's HEADERS pass the metadata check and fail to encode
        // only once its slot comes, and that slot goes to the next waiting call
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(1).maxInboundMetadataSize(4 << 20));
        RpcChannel c = channel(s, RpcChannel.forAddress("127.0.0.1", s.getPort()).directExecutor());
        CompletableFuture<byte[]> held = ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(1));
        Await.until(() -> service.holdCalls.get() == 1, "the first call holds the only slot");

        Metadata md = new Metadata();
        md.put(BIG, "r".repeat((1 << 20) + 1));
        ClientCall<byte[], byte[]> tooLarge = c.newCall(TestService.ECHO, CallOptions.DEFAULT.withHeaders(md));
        CompletableFuture<byte[]> tooLargeResult = ClientCalls.futureUnaryCall(tooLarge, new byte[1]);
        ClientCall<byte[], byte[]> next = c.newCall(TestService.ECHO, CallOptions.DEFAULT);
        CompletableFuture<Boolean> underTheOthersLock = new CompletableFuture<>();
        CompletableFuture<Status> nextClosed = new CompletableFuture<>();
        next.start(new ClientCall.Listener<>() {
            @Override
            public void onReady() {
                // with a direct executor, on the thread that opened this call: the one that gave up the slot
                underTheOthersLock.complete(Thread.holdsLock(tooLarge));
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                nextClosed.complete(status);
            }
        }, new Metadata());
        next.request(1);
        next.sendMessage(Bytes.ofInt(3));
        next.halfClose();

        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(1), held.get(60, TimeUnit.SECONDS));
        Status refused = statusOf(assertThrows(ExecutionException.class, () -> tooLargeResult.get(60, TimeUnit.SECONDS)));
        assertEquals(Status.Code.INTERNAL, refused.getCode());
        assertTrue(refused.getDescription().endsWith("(the call was not sent)"), refused.getDescription());
        assertEquals(Status.Code.OK, nextClosed.get(60, TimeUnit.SECONDS).getCode(), "the next call got the slot");
        assertFalse(underTheOthersLock.get(60, TimeUnit.SECONDS), "the next call opened under the refused call's lock");
    }

    @Test
    void aWaitingCallStillMeetsItsDeadlineAndCanBeCancelled() throws Exception {
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(1));
        RpcChannel c = channel(s);
        CompletableFuture<byte[]> held = ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(1));
        Await.until(() -> service.holdCalls.get() == 1, "the first call holds the only slot");

        CompletableFuture<byte[]> late = ClientCalls.futureUnaryCall(
                c.newCall(TestService.HOLD, CallOptions.DEFAULT.withDeadlineAfter(50, TimeUnit.MILLISECONDS)), Bytes.ofInt(2));
        Status deadline = statusOf(assertThrows(ExecutionException.class, () -> late.get(60, TimeUnit.SECONDS)));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, deadline.getCode());
        assertTrue(deadline.getDescription().contains("waiting for one of the 1 concurrent streams"), deadline.getDescription());

        ClientCall<byte[], byte[]> cancelled = c.newCall(TestService.HOLD, CallOptions.DEFAULT);
        CompletableFuture<byte[]> cancelledResult = ClientCalls.futureUnaryCall(cancelled, Bytes.ofInt(3));
        cancelled.cancel("changed my mind", null);
        assertEquals(Status.Code.CANCELLED, statusOf(assertThrows(ExecutionException.class,
                () -> cancelledResult.get(60, TimeUnit.SECONDS))).getCode());

        CompletableFuture<byte[]> waiting = ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(4));
        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(1), held.get(60, TimeUnit.SECONDS));
        assertArrayEquals(Bytes.ofInt(4), waiting.get(60, TimeUnit.SECONDS), "the waiting call got the freed slot");
        assertEquals(2, service.holdCalls.get(), "the expired and the cancelled calls never reached the server");
    }

    @Test
    void aCallWaitingOnAConnectionThatGoesAwayMovesToANewOne() throws Exception {
        List<PeerConnection> opened = new java.util.concurrent.CopyOnWriteArrayList<>();
        RpcServer s = start(RpcServer.forPort(0).maxConcurrentCallsPerConnection(1).connectionListener(opened::add));
        RpcChannel c = channel(s);
        CompletableFuture<byte[]> first = ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(1));
        Await.until(() -> service.holdCalls.get() == 1, "the first call holds the connection's only slot");
        CompletableFuture<byte[]> waiting = ClientCalls.futureUnaryCall(c.newCall(TestService.HOLD, CallOptions.DEFAULT), Bytes.ofInt(2));
        assertEquals(1, opened.size());
        opened.getFirst().goAway();
        Await.until(() -> service.holdCalls.get() == 2, () -> "the waiting call reached the server on a new connection: "
                + service.holdCalls.get() + " calls, " + opened.size() + " connections");
        assertEquals(2, opened.size());
        service.holdRelease.countDown();
        assertArrayEquals(Bytes.ofInt(1), first.get(60, TimeUnit.SECONDS), "the call on the connection going away finishes there");
        assertArrayEquals(Bytes.ofInt(2), waiting.get(60, TimeUnit.SECONDS));
    }

    // ------------------------------------------------------------------ metadata

    @Test
    void headersOverTheServersMetadataLimitAreRefusedAndTheConnectionCarriesOn() throws IOException {
        RpcServer s = start(RpcServer.forPort(0));
        RawClient r = raw(s);
        r.send(FrameType.HEADERS, FrameFlags.END_STREAM, 1, RawClient.headers(TestService.ECHO.getFullMethodName(),
                Map.of("x-big", "v".repeat(9000))));
        r.send(FrameType.HEADERS, 0, 3, RawClient.headers(TestService.HOLD.getFullMethodName(), Map.of("x-small", "v".repeat(100))));
        Map<Integer, Trailers> refused = r.trailersUntilPingAck();
        assertEquals(List.of(1), List.copyOf(refused.keySet()), "only the oversized HEADERS is refused");
        Status st = refused.get(1).status();
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, st.getCode());
        assertTrue(st.getDescription().startsWith("Header size exceeded max allowed size (8192)"), st.getDescription());
        assertEquals(1, s.connectionCount());
        assertEquals(0, service.calls.get());
    }

    @Test
    void aClientFailsACallWhoseMetadataIsOverTheServersAdvertisedLimitWithoutSendingIt() throws Exception {
        RpcServer s = start(RpcServer.forPort(0).maxInboundMetadataSize(1024));
        RpcChannel c = channel(s);
        c.ping().get(60, TimeUnit.SECONDS); // connected: the server's HELLO is known
        Metadata big = new Metadata().put(BIG, "v".repeat(2000));
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(c, TestService.ECHO,
                CallOptions.DEFAULT.withHeaders(big), new byte[1]));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("exceeds the 1024 bytes the server"), e.getStatus().getDescription());
        assertTrue(e.getStatus().getDescription().endsWith("the call was not sent"), e.getStatus().getDescription());
        assertEquals(0, service.calls.get());
        assertArrayEquals(new byte[1], ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[1]),
                "a call within the limit goes through");
    }

    @Test
    void theServerSendsNoResponseMetadataOverTheClientsAdvertisedLimit() throws Exception {
        RpcServer s = start(RpcServer.forPort(0));
        RpcChannel c = channel(s, RpcChannel.forAddress("127.0.0.1", s.getPort()).maxInboundMetadataSize(256));
        Metadata md = new Metadata().put(TestService.ASCII_KEY, "v".repeat(300));
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(c, TestService.META,
                CallOptions.DEFAULT.withHeaders(md), new byte[]{'x'}));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().startsWith("response headers of " + (32 + "x-ascii".length() + "hdr-".length() + 300) + " bytes"), e.getStatus().getDescription());
        assertTrue(e.getStatus().getDescription().contains("exceed the 256 bytes the client accepts"), e.getStatus().getDescription());
        Metadata small = new Metadata().put(TestService.ASCII_KEY, "ok");
        assertArrayEquals(new byte[]{'x'}, ClientCalls.blockingUnaryCall(c, TestService.META, CallOptions.DEFAULT.withHeaders(small),
                new byte[]{'x'}), "the connection carries on");
    }

    @Test
    void responseMetadataOverTheClientsLimitFromAServerIgnoringItFailsTheCall() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            RpcChannel c = channel(null, RpcChannel.forAddress("127.0.0.1", listener.getLocalPort()).maxInboundMetadataSize(256));
            CompletableFuture<byte[]> first = ClientCalls.futureUnaryCall(c.newCall(TestService.ECHO, CallOptions.DEFAULT), new byte[1]);
            Socket accepted = listener.accept();
            toClose.add(accepted);
            RawPeer server = new RawPeer(accepted);
            RawPeer.Frame hello = server.read();
            assertEquals(FrameType.HELLO, hello.type());
            assertEquals(new LimitsCapability(0, 256, 64 << 20), LimitsCapability.of(Frames.decodeHello(MemorySegment.ofArray(hello.payload()))),
                    "the client advertises its metadata limit");
            server.send(FrameType.HELLO, 0, 0, RawPeer.hello());

            int id = server.readUntil(FrameType.HEADERS).stream();
            server.send(FrameType.HEADERS, 0, id, RawPeer.metadata(Map.of("x-big", "v".repeat(300))));
            RawPeer.Frame cancel = server.readUntil(FrameType.CANCEL);
            assertEquals(id, cancel.stream(), "the client cancels the call on the server");
            Status st = statusOf(assertThrows(ExecutionException.class, () -> first.get(60, TimeUnit.SECONDS)));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, st.getCode());
            assertTrue(st.getDescription().startsWith("Header size exceeded max allowed size (256)"), st.getDescription());

            CompletableFuture<byte[]> second = ClientCalls.futureUnaryCall(c.newCall(TestService.ECHO, CallOptions.DEFAULT), new byte[1]);
            int id2 = server.readUntil(FrameType.HEADERS).stream();
            server.send(FrameType.TRAILERS, 0, id2, RawPeer.concat(RawPeer.status(Status.Code.OK, ""),
                    RawPeer.metadata(Map.of("x-big", "v".repeat(300)))));
            st = statusOf(assertThrows(ExecutionException.class, () -> second.get(60, TimeUnit.SECONDS)));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, st.getCode());
            assertTrue(st.getDescription().startsWith("Header size exceeded max allowed size (256): TRAILERS"), st.getDescription());
            assertTrue(st.getDescription().endsWith("the peer ended the call with OK"), st.getDescription());
        }
    }

    // ------------------------------------------------------------------ connections

    @Test
    void connectionsOverTheServersLimitAreClosedAtOnceAndTheOthersCarryOn() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        RpcServer s = start(RpcServer.forPort(0).maxConnections(2).meterRegistry(meters));
        RpcChannel c = channel(s);
        assertArrayEquals(new byte[1], ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[1]));
        Socket second = new Socket();
        toClose.add(second);
        second.connect(new InetSocketAddress("127.0.0.1", s.getPort()), 30_000);
        Await.until(() -> s.connectionCount() == 2, () -> "two connections counted, not " + s.connectionCount());

        try (Socket third = new Socket()) {
            third.connect(new InetSocketAddress("127.0.0.1", s.getPort()), 30_000);
            third.setSoTimeout(60_000);
            try {
                assertEquals(-1, third.getInputStream().read(), "the server closes the connection over its limit");
            } catch (SocketTimeoutException ex) {
                fail("the server did not close the connection over its limit");
            } catch (SocketException ex) {
                // reset: closed as well
            }
        }
        assertEquals(1, s.refusedConnectionCount());
        assertEquals(1.0, meters.get("rdmarpc.server.limit.refusals").tag("limit", "connections").counter().count());
        assertEquals(2, s.connectionCount());
        assertArrayEquals(new byte[2], ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[2]),
                "the connections already open carry on");

        second.close();
        Await.until(() -> s.connectionCount() == 1, () -> "the closed connection is no longer counted: " + s.connectionCount());
        RawClient again = raw(s);
        assertEquals(Hello.VERSION, again.serverHello.version(), "a new connection is served once there is room");
    }

    // ------------------------------------------------------------------ memory budget

    /** Takes client-streaming requests but reads none until the test lets it: they stay in the server's buffers. */
    private static final MethodDescriptor<byte[], byte[]> SIT = MethodDescriptor.create("limits.Budget/Sit",
            MethodDescriptor.MethodType.CLIENT_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);

    @Test
    void overTheMemoryBudgetNewCallsAreRefusedUntilMemoryIsReleased() throws Exception {
        SlabPool serverPool = new SlabPool(0, false);
        AtomicReference<ServerCall<byte[], byte[]>> sitting = new AtomicReference<>();
        ServiceDefinition budget = ServiceDefinition.builder("limits.Budget").addMethod(SIT, (call, headers) -> {
            sitting.set(call);
            return new ServerCall.Listener<>() {
                private int received;

                @Override
                public void onMessage(byte[] message) {
                    received += message.length;
                }

                @Override
                public void onHalfClose() {
                    call.sendHeaders(new Metadata());
                    call.sendMessage(Bytes.ofInt(received));
                    call.close(Status.OK, new Metadata());
                }
            };
        }).build();
        long limit = 1 << 20;
        RpcServer s = start(RpcServer.forPort(0).slabPool(serverPool).memoryBudget(limit).addService(budget));
        RpcChannel c = channel(s);
        assertArrayEquals(new byte[1], ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[1]));
        assertTrue(serverPool.inUseBytes() <= limit, "under budget at first: " + serverPool.inUseBytes());

        CompletableFuture<byte[]> sitResult = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(c.newCall(SIT, CallOptions.DEFAULT), new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                sitResult.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                sitResult.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        int size = 3 << 19; // 1.5 MiB: within the 2 MiB window, so it all arrives and waits in the server's pool
        requests.onNext(Bytes.pattern(size, 7));
        requests.onCompleted();
        Await.until(() -> serverPool.inUseBytes() > limit, () -> "the request is held by the server: " + serverPool.inUseBytes());

        StatusException e = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[1]));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().startsWith("server memory budget exhausted"), e.getStatus().getDescription());
        assertEquals(1, service.calls.get(), "the refused call never reached the application");

        sitting.get().request(Integer.MAX_VALUE); // the call already running goes on
        assertArrayEquals(Bytes.ofInt(size), sitResult.get(60, TimeUnit.SECONDS));
        Await.until(() -> serverPool.inUseBytes() <= limit, () -> "the server released the request: " + serverPool.inUseBytes());
        assertArrayEquals(new byte[3], ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, new byte[3]),
                "new calls are accepted again");
    }

    // ------------------------------------------------------------------ a client that speaks frames by hand

    /** One end of a connection that reads and writes frames by hand. */
    private static class RawPeer {
        final Socket socket;
        private final OutputStream out;
        private final DataInputStream in;

        RawPeer(Socket socket) throws IOException {
            this.socket = socket;
            socket.setSoTimeout(60_000);
            out = socket.getOutputStream();
            in = new DataInputStream(socket.getInputStream());
        }

        /** A frame as read. */
        record Frame(int type, int flags, int stream, byte[] payload) {
        }

        void send(int type, int flags, int stream, byte[] payload) throws IOException {
            ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + payload.length).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(payload.length).put((byte) type).put((byte) flags).putShort((short) 0).putInt(stream).putInt(0).put(payload);
            out.write(b.array());
            out.flush();
        }

        Frame read() throws IOException {
            byte[] header = new byte[FrameHeader.SIZE];
            in.readFully(header);
            ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
            int length = h.getInt();
            int type = h.get() & 0xff;
            int flags = h.get() & 0xff;
            h.getShort();
            int stream = h.getInt();
            byte[] payload = new byte[length];
            in.readFully(payload);
            return new Frame(type, flags, stream, payload);
        }

        /** Reads frames up to the first of {@code type}, and returns it. */
        Frame readUntil(int type) throws IOException {
            while (true) {
                Frame f = read();
                if (f.type == type) {
                    return f;
                }
            }
        }

        /** A HELLO payload without capabilities: no limits advertised. */
        static byte[] hello() {
            Hello hello = new Hello(Hello.VERSION, 1 << 20, 1 << 20, 4 << 20, Map.of());
            byte[] payload = new byte[hello.encodedSize()];
            hello.encode(new WireWriter(MemorySegment.ofArray(payload), 0));
            return payload;
        }

        /** A metadata block of ASCII entries. */
        static byte[] metadata(Map<String, String> metadata) {
            int size = 2;
            for (Map.Entry<String, String> e : metadata.entrySet()) {
                size += 2 + e.getKey().length() + 4 + e.getValue().length();
            }
            ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putShort((short) metadata.size());
            for (Map.Entry<String, String> e : metadata.entrySet()) {
                b.putShort((short) e.getKey().length()).put(e.getKey().getBytes(StandardCharsets.US_ASCII));
                b.putInt(e.getValue().length()).put(e.getValue().getBytes(StandardCharsets.US_ASCII));
            }
            return b.array();
        }

        /** A status as CANCEL and TRAILERS start with it. */
        static byte[] status(Status.Code code, String description) {
            byte[] d = description.getBytes(StandardCharsets.UTF_8);
            return ByteBuffer.allocate(1 + 4 + d.length).order(ByteOrder.LITTLE_ENDIAN).put((byte) code.value()).putInt(d.length)
                    .put(d).array();
        }

        static byte[] concat(byte[] a, byte[] b) {
            return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
        }
    }

    /** A client connection that sends frames by hand and ignores the limits the server advertises. */
    private static final class RawClient extends RawPeer implements AutoCloseable {
        final Hello serverHello;
        private long nextPing = 1;

        RawClient(int port) throws IOException {
            super(connect(port));
            send(FrameType.HELLO, 0, 0, hello());
            Frame first = read();
            assertEquals(FrameType.HELLO, first.type(), "the server answers with HELLO");
            serverHello = Frames.decodeHello(MemorySegment.ofArray(first.payload()));
        }

        private static Socket connect(int port) throws IOException {
            Socket s = new Socket();
            s.connect(new InetSocketAddress("127.0.0.1", port), 30_000);
            return s;
        }

        /**
         * Sends a PING and reads until its ACK: the TRAILERS received on the way, by stream. The server answers each
         * HEADERS it refuses on its I/O thread before it reads the PING, so every refusal is among them.
         */
        Map<Integer, Trailers> trailersUntilPingAck() throws IOException {
            long data = nextPing++;
            send(FrameType.PING, 0, 0, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(data).array());
            Map<Integer, Trailers> trailers = new HashMap<>();
            while (true) {
                Frame f = read();
                if (f.type() == FrameType.PING && (f.flags() & FrameFlags.ACK) != 0
                        && Frames.decodePing(MemorySegment.ofArray(f.payload())) == data) {
                    return trailers;
                }
                if (f.type() == FrameType.TRAILERS) {
                    assertFalse(trailers.containsKey(f.stream()), "one TRAILERS per stream");
                    trailers.put(f.stream(), Frames.decodeTrailers(MemorySegment.ofArray(f.payload())));
                }
            }
        }

        /** A client HEADERS payload: no timeout, the path, an authority, and ASCII metadata. */
        static byte[] headers(String path, Map<String, String> metadata) {
            byte[] p = path.getBytes(StandardCharsets.UTF_8);
            byte[] a = "limits.test".getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(8 + 2 + p.length + 2 + a.length).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(0).putShort((short) p.length).put(p).putShort((short) a.length).put(a);
            return concat(b.array(), metadata(metadata));
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
