package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many concurrent large requests from a stock grpc-java client over HTTP/2 to one connection of an rdmarpc server:
 * together far more than the server's connection window, each within it, so the server admits them in turn (the
 * bridge takes each message's charge before its bytes past the first HTTP/2 window) and every call is answered; no
 * call is refused, the client is never sent GOAWAY (no second connection), and the server frees what it held.
 */
class Http2LargeMessagesTest {
    private static final int MAX_MESSAGE = 8 << 20;

    private final SlabPool serverPool = new SlabPool(0, false, 0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RpcServer server;
    private ManagedChannel channel;

    private void start() throws Exception {
        start(MAX_MESSAGE);
    }

    private void start(int maxMessage) throws Exception {
        // no keepalive: its PING's flush once hid a lost wake-up for two minutes (the calls were answered late);
        // without it a lost wake-up leaves calls unanswered until their deadline, and the test fails
        server = RpcServer.forPort(0).addService(new TestService().definition()).slabPool(serverPool)
                .keepAliveTime(Duration.ZERO).maxInboundMessageSize(maxMessage).meterRegistry(registry).build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).negotiationType(NegotiationType.PLAINTEXT)
                .maxInboundMessageSize(maxMessage).build();
    }

    @Test
    void aMessageOverHalfTheConnectionWindowAfterSmallerOnesIsAnswered() throws Exception {
        // the server's connection window is raised to fit its 17 MiB limit, so such a message is over half of it: the
        // credit for the smaller messages before it (under half the window) must come back when the bridge is blocked
        int largest = 17 << 20;
        start(largest);
        for (int size : new int[] {1 << 20, 4 << 20, largest - 64, 3 << 20, largest - 64}) {
            byte[] m = Bytes.pattern(size, size);
            byte[] answer = ClientCalls.blockingUnaryCall(channel, StockGrpc.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), m);
            assertTrue(Arrays.equals(m, answer), "an echo of " + size + " bytes");
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "{0} concurrent unary echoes of {1} bytes")
    @CsvSource({"64, 1048576", "100, 1048576", "64, 4194304", "100, 4194304"})
    void concurrentLargeUnaryEchoesAreAllAnswered(int calls, int size) throws Exception {
        start();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger answered = new AtomicInteger();
        CompletableFuture<Void> all = new CompletableFuture<>();
        AtomicInteger left = new AtomicInteger(calls);
        for (int i = 0; i < calls; i++) {
            int seed = i;
            ClientCalls.asyncUnaryCall(channel.newCall(StockGrpc.ECHO, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES)),
                    Bytes.pattern(size, seed), new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] value) {
                            if (Arrays.equals(Bytes.pattern(size, seed), value)) {
                                answered.incrementAndGet();
                            } else {
                                failures.add("call " + seed + ": another answer (" + value.length + " bytes)");
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            failures.add("call " + seed + ": " + io.grpc.Status.fromThrowable(t));
                            done();
                        }

                        @Override
                        public void onCompleted() {
                            done();
                        }

                        private void done() {
                            if (left.decrementAndGet() == 0) {
                                all.complete(null);
                            }
                        }
                    });
        }
        all.get(10, TimeUnit.MINUTES); // a hang detector only: the calls' own deadlines end them sooner
        assertTrue(failures.isEmpty(), () -> failures.size() + " calls failed, e.g. " + failures.peek());
        assertEquals(calls, answered.get());
        assertServedOnOneConnectionWithoutRefusals();
    }

    @Test
    void aBidiStreamOfLargeMessagesIsAnsweredInFull() throws Exception {
        start();
        int messages = 24;
        int size = 3 << 20;
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger received = new AtomicInteger();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(StockGrpc.CHAT, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES)), new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        byte[] expected = Bytes.pattern(size, received.getAndIncrement());
                        for (int i = 0; i < expected.length; i++) {
                            expected[i] = (byte) ~expected[i];
                        }
                        if (!Arrays.equals(expected, value)) {
                            failures.add("answer " + (received.get() - 1) + " is not its request's");
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        for (int i = 0; i < messages; i++) {
            requests.onNext(Bytes.pattern(size, i));
        }
        requests.onCompleted();
        done.get(10, TimeUnit.MINUTES); // a hang detector only
        assertTrue(failures.isEmpty(), failures::toString);
        assertEquals(messages, received.get());
        assertServedOnOneConnectionWithoutRefusals();
    }

    private void assertServedOnOneConnectionWithoutRefusals() throws Exception {
        assertEquals(1, registry.get("rdmarpc.server.connections.opened").tag("transport", "h2").counter().count(),
                "one connection served every call: no GOAWAY made the client reconnect");
        assertEquals(0, registry.find("rdmarpc.server.limit.refusals").counters().stream().mapToDouble(c -> c.count()).sum(),
                "nothing refused");
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> serverPool.inUseBytes() == 0,
                () -> "the server freed what the connection held: " + serverPool.inUseBytes() + " bytes in use");
    }
}
