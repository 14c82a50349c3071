package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.core.testing.RawFrameClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What one connection can make a server hold (PROTOCOL.md "Limits": 2 × (W + Q + U) + F), attacked by raw clients and
 * measured by the server's own slab pool: partial large messages on every stream, a window of empty messages on eight
 * streams, large responses never read, a client that keeps the connection window and one that goes past it, and a
 * channel, which waits for the server's connection credit.
 */
class ConnectionWindowTest {
    private static final int W = RpcServer.DEFAULT_CONNECTION_FLOW_CONTROL_WINDOW;
    /** Q + U: queued responses (6 MiB) and what the transport holds past its mark (2 MiB + 256 KiB), in payload bytes. */
    private static final long QUEUED = (6 << 20) + (2 << 20) + (256 << 10);
    /**
     * The formula, 2 × (W + Q + U) + F, with the defaults, plus 1 MiB for what the open streams and the connection keep
     * (headers, tables).
     */
    private static final long BOUND = 2L * (W + QUEUED) + (1 << 20) + (1 << 20);
    private static final String SIT = "window.Sit/Sit";
    private static final MethodDescriptor<byte[], byte[]> SIT_METHOD = MethodDescriptor.create(SIT,
            MethodDescriptor.MethodType.CLIENT_STREAMING, Bytes.MARSHALLER, Bytes.MARSHALLER);

    private final SlabPool serverPool = new SlabPool(0, false, 0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ExecutorService handlers = Executors.newCachedThreadPool();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** The SIT calls that reached their handler; none is asked for a message until {@link #releaseSitting}. */
    private final Queue<ServerCall<byte[], byte[]>> sitting = new ConcurrentLinkedQueue<>();
    private final TestService service = new TestService();
    private RpcServer server;
    private long baseline;

    /** Client-streaming; reads nothing until released, then counts the messages and answers with the count. */
    private ServiceDefinition sitService() {
        return ServiceDefinition.builder("window.Sit").addMethod(SIT_METHOD, (call, headers) -> {
            sitting.add(call);
            return new ServerCall.Listener<>() {
                private int messages;

                @Override
                public void onMessage(byte[] message) {
                    messages++;
                }

                @Override
                public void onHalfClose() {
                    call.sendHeaders(new Metadata());
                    call.sendMessage(Bytes.ofInt(messages));
                    call.close(Status.OK, new Metadata());
                }
            };
        }).build();
    }

    private void releaseSitting() {
        for (ServerCall<byte[], byte[]> c : sitting) {
            c.request(Integer.MAX_VALUE);
        }
    }

    private void start(UnaryOperator<RpcServer.Builder> config) throws IOException {
        server = config.apply(RpcServer.forPort(0).addService(service.definition()).addService(sitService())
                .slabPool(serverPool).executor(handlers).meterRegistry(registry)).build().start();
        assertGoodClientWorks();
        baseline = serverPool.inUseBytes();
    }

    private void assertGoodClientWorks() {
        RpcChannel c = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        try {
            byte[] ok = Bytes.pattern(1000, 3);
            assertArrayEquals(ok, ClientCalls.blockingUnaryCall(c, TestService.ECHO, CallOptions.DEFAULT, ok));
        } finally {
            c.shutdownNow();
        }
    }

    private RawFrameClient raw(FlowCapability flow, int initialWindow, boolean read) throws IOException {
        RawFrameClient r = new RawFrameClient(server.getPort(), initialWindow, flow, read);
        closeables.add(r);
        return r;
    }

    private void assertHeldWithinTheBound(String what) {
        long held = serverPool.inUseBytes() - baseline;
        long peak = serverPool.peakInUseBytes() - baseline;
        assertTrue(peak <= BOUND, what + ": the server held at most " + (peak >> 20) + " MiB, the bound is "
                + (BOUND >> 20) + " MiB (now " + (held >> 20) + " MiB)");
    }

    private void assertAllReleasedAfterClose() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        closeables.clear();
        Await.until(() -> serverPool.inUseBytes() <= baseline, () -> "the server released what the connection held: "
                + serverPool.inUseBytes() + " bytes in use, " + baseline + " before");
        assertGoodClientWorks();
    }

    private double refusals(String limit) {
        var c = registry.find("rdmarpc.server.limit.refusals").tags("limit", limit).counter();
        return c == null ? 0 : c.count();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        handlers.shutdownNow();
    }

    @Test
    void partialLargeMessagesOnEveryStreamAreHeldWithinTheBound() throws Exception {
        start(b -> b);
        RawFrameClient attacker = raw(null, 1 << 20, true);
        for (int i = 0; i < 100; i++) {
            int stream = 1 + 2 * i;
            // the first 2 MiB (a stream window) of a 4 MiB request, never finished
            attacker.write(RawFrameClient.headers(stream, TestService.NAME + "/Echo"),
                    RawFrameClient.begin(stream, 0, (4 << 20) - 16, (1 << 20) - 4),
                    RawFrameClient.more(stream, 0, 1 << 20));
        }
        attacker.sync();
        assertHeldWithinTheBound("100 streams of partial 4 MiB requests");
        long refused = attacker.trailersWith(Status.Code.RESOURCE_EXHAUSTED);
        assertTrue(refused > 0 && refused < 100, "the calls past the window were refused: " + refused);
        assertTrue(attacker.trailers().stream().allMatch(t -> t.status().getDescription().contains("window")),
                () -> "refused for the connection window: " + attacker.trailers().peek().status());
        assertEquals(refused, refusals("connection_memory"));
        assertGoodClientWorks();
        assertAllReleasedAfterClose();
    }

    @Test
    void aClientThatKeepsTheWindowAndGoesPastItIsAProtocolError() throws Exception {
        start(b -> b);
        RawFrameClient liar = raw(new FlowCapability(true, 0), 1 << 20, true);
        for (int i = 0; i < 5; i++) {
            int stream = 1 + 2 * i;
            // each BEGIN charges its whole 4 MiB message: the fifth goes past the 16 MiB window
            liar.write(RawFrameClient.headers(stream, TestService.NAME + "/Echo"),
                    RawFrameClient.begin(stream, 0, (4 << 20) - 16, 1000));
        }
        Await.until(liar::closedByServer, () -> "the server closed the connection of a client past the window it keeps");
        assertHeldWithinTheBound("a client past the window it keeps");
        assertAllReleasedAfterClose();
    }

    @Test
    void aFloodOfBlockedFramesClosesOnlyThatConnection() throws Exception {
        // a client may say it is blocked once per connection WINDOW it got, plus once; beyond that each BLOCKED is a
        // control frame, and a flood of them ends the connection like any control-frame flood
        start(b -> b);
        RawFrameClient flooder = raw(new FlowCapability(true, 0), 1 << 20, true);
        byte[][] burst = new byte[100][];
        Arrays.fill(burst, RawFrameClient.bytes(Frames.connectionBlocked(SlabPool.shared())));
        try {
            for (int i = 0; i < 1000 && !flooder.closedByServer(); i++) { // 100,000 frames: 10 times the burst allowed
                flooder.write(burst);
            }
        } catch (IOException closedWhileWriting) {
            // the server closed the connection while the flood was being written
        }
        Await.until(flooder::closedByServer, () -> "the server closed the connection of a client flooding BLOCKED frames");
        assertGoodClientWorks();
        assertAllReleasedAfterClose();
    }

    @Test
    void aChannelWaitsForTheServersConnectionCredit() throws Exception {
        start(b -> b);
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        closeables.add(channel::shutdownNow);
        int calls = 20;
        int size = 3 << 20;
        List<CompletableFuture<byte[]>> results = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            CompletableFuture<byte[]> result = new CompletableFuture<>();
            ClientCall<byte[], byte[]> call = channel.newCall(SIT_METHOD, CallOptions.DEFAULT);
            StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(call, observer(result));
            requests.onNext(Bytes.pattern(size, i));
            requests.onCompleted();
            results.add(result);
        }
        // 20 × 3 MiB is more than the window: the server holds what fits, the channel keeps the rest
        Await.until(() -> sitting.size() == calls && serverPool.inUseBytes() - baseline >= (long) (W / size) * size,
                () -> "the calls started and the window filled: " + sitting.size() + " calls, " + serverPool.inUseBytes());
        assertTrue(serverPool.inUseBytes() - baseline <= 2L * W, "held " + serverPool.inUseBytes());
        releaseSitting();
        for (CompletableFuture<byte[]> r : results) {
            assertEquals(1, Bytes.toInt(r.get(60, TimeUnit.SECONDS)), "every message arrived once credit came back");
        }
        assertHeldWithinTheBound("20 requests of 3 MiB from a channel");
        assertAllReleasedAfterClose();
    }

    @Test
    void aMessageOverHalfTheWindowIsNotLeftWaitingForCreditHeldBack() throws Exception {
        // the window is raised to fit the largest message (17 MiB), so that message is over half of it: after a small
        // call the credit owed (under half the window) must still come back, or the large one could never be sent
        int largest = 17 << 20;
        start(b -> b.maxInboundMessageSize(largest));
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).maxInboundMessageSize(largest).build();
        closeables.add(channel::shutdownNow);
        for (int size : new int[] {1 << 20, 4 << 20, largest - 64, 3 << 20, largest - 64}) {
            byte[] m = Bytes.pattern(size, size);
            assertArrayEquals(m, ClientCalls.blockingUnaryCall(channel, TestService.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), m), "an echo of " + size + " bytes");
        }
        assertAllReleasedAfterClose();
    }

    private static StreamObserver<byte[]> observer(CompletableFuture<byte[]> result) {
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                result.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    @Test
    void aWindowOfEmptyMessagesOnEightStreamsIsHeldWithinTheBound() throws Exception {
        start(b -> b);
        RawFrameClient attacker = raw(null, 1 << 20, true);
        for (int i = 0; i < 8; i++) {
            int stream = 1 + 2 * i;
            attacker.write(RawFrameClient.headers(stream, SIT));
            // a full 2 MiB stream window of 4-byte messages: 524,288 of them
            for (int k = 0; k < 8; k++) {
                attacker.write(RawFrameClient.emptyMessages(stream, 65_536));
            }
        }
        attacker.sync();
        assertHeldWithinTheBound("8 streams given a window of empty messages each");
        assertTrue(attacker.trailersWith(Status.Code.RESOURCE_EXHAUSTED) > 0,
                "the messages past the window were refused: " + attacker.trailers().size() + " trailers");
        releaseSitting(); // the handlers take what was held: the queues drain
        assertAllReleasedAfterClose();
    }

    @Test
    void emptyMessagesFromAnHttp2ClientAreHeldWithinTheBoundAndWaitForAdmission() throws Exception {
        start(b -> b);
        try (RawH2Client h2 = new RawH2Client(server.getPort())) {
            h2.framesUntil(f -> f.type() == RawH2Client.SETTINGS); // the connection is set up
            h2.frame(RawH2Client.SETTINGS, 0, 1, new byte[0]);
            byte[] data = new byte[16_380]; // 3,276 empty gRPC messages (flag 0, length 0) in one DATA frame
            // 16 streams of a full 64 KiB HTTP/2 stream window each: 209,664 messages, 128 window bytes each, far
            // more than the 16 MiB window (131,072 of them): the ones past it wait in the bridge to be admitted
            for (int i = 0; i < 16; i++) {
                int stream = 1 + 2 * i;
                h2.headers(stream, RawH2Client.request("Sit").path("/" + SIT), false);
                for (int k = 0; k < 4; k++) {
                    h2.frame(RawH2Client.DATA, stream, 0, data);
                }
                h2.flush();
            }
            h2.frame(RawH2Client.PING, 0, 0, new byte[8]).flush();
            List<RawH2Client.Frame> answer = h2.framesUntil(f -> f.type() == RawH2Client.PING && (f.flags() & 1) != 0);
            assertEquals(RawH2Client.PING, answer.getLast().type(), "the connection stayed open: " + answer.size() + " frames");
            Await.until(() -> sitting.size() == 16, () -> sitting.size() + " of 16 calls reached their handler");
            assertHeldWithinTheBound("16 HTTP/2 streams of empty messages");
            assertEquals(0, refusals("connection_memory"), "the messages past the window wait: nothing refused");
            releaseSitting();
        }
        assertAllReleasedAfterClose();
    }

    @Test
    void emptyMessagesFromAChannelWaitForCreditAndAllArrive() throws Exception {
        start(b -> b);
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        closeables.add(channel::shutdownNow);
        int streams = 8;
        int perStream = 40_000; // 8 × 40,000 × 128 bytes: 2.4 windows
        List<CompletableFuture<byte[]>> results = new ArrayList<>();
        List<Thread> senders = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            CompletableFuture<byte[]> result = new CompletableFuture<>();
            StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(
                    channel.newCall(SIT_METHOD, CallOptions.DEFAULT), observer(result));
            results.add(result);
            senders.add(Thread.ofPlatform().start(() -> {
                for (int k = 0; k < perStream; k++) {
                    requests.onNext(new byte[0]);
                }
                requests.onCompleted();
            }));
        }
        Await.until(() -> sitting.size() == streams, () -> "the calls reached the server: " + sitting.size());
        releaseSitting();
        for (CompletableFuture<byte[]> r : results) {
            assertEquals(perStream, Bytes.toInt(r.get(120, TimeUnit.SECONDS)), "every empty message arrived");
        }
        for (Thread t : senders) {
            t.join();
        }
        assertHeldWithinTheBound("8 streams of empty messages from a channel");
        assertEquals(0, refusals("connection_memory"), "a channel keeps the window: nothing refused");
        assertAllReleasedAfterClose();
    }

    @Test
    void largeResponsesNeverReadAreHeldWithinTheBound() throws Exception {
        start(b -> b);
        // a client that advertises huge stream windows and never reads a byte
        RawFrameClient reader = raw(null, Integer.MAX_VALUE, false);
        int streams = 100;
        for (int i = 0; i < streams; i++) {
            int stream = 1 + 2 * i;
            // FIREHOSE sends 1 MiB responses until cancelled
            reader.write(RawFrameClient.headers(stream, TestService.NAME + "/Firehose"),
                    RawFrameClient.message(stream, FrameFlags.END_STREAM, Bytes.ofInt(1 << 20)));
        }
        Await.until(() -> service.firehoseThreads.size() == streams && service.firehoseThreads.stream().allMatch(
                ConnectionWindowTest::waitsForRoom), () -> "every handler waits to send: " + service.firehoseThreads.size()
                + " started, " + service.firehoseSent.get() + " responses sent");
        assertHeldWithinTheBound("100 streams of 1 MiB responses never read");
        assertAllReleasedAfterClose();
    }

    /** Whether {@code t} waits in a send for the connection's queue to drain. */
    private static boolean waitsForRoom(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().startsWith("awaitRoom")) {
                return true;
            }
        }
        return false;
    }
}
