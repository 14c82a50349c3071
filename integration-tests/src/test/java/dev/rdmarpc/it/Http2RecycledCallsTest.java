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

import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stock grpc-java client keeps 64 unary 4 KiB echoes in flight against an rdmarpc server over HTTP/2, both with their
 * default executors: handlers close their calls on the server's executor threads while the I/O thread tells every
 * open stream that the connection turned writable again, so the end of a call is often seen by two threads at once,
 * and ended streams are recycled for the next calls meanwhile. Every caller must get its own answer, on the one
 * connection: a call that left its connection twice (the second time as another call's recycled stream) failed the
 * connection, and every call on it, with UNAVAILABLE. Bounded by the number of calls.
 */
class Http2RecycledCallsTest {
    private static final int CALLS = 40_000;
    private static final int IN_FLIGHT = 64;
    private static final int SIZE = 4096;

    private final SlabPool serverPool = new SlabPool(0, false, 0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RpcServer server;
    private ManagedChannel channel;

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

    @Test
    void everyCallerGetsItsOwnAnswerOnOneConnection() throws Exception {
        server = RpcServer.forPort(0).addService(new TestService().definition()).slabPool(serverPool)
                .meterRegistry(registry).build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).negotiationType(NegotiationType.PLAINTEXT).build();
        Semaphore slots = new Semaphore(IN_FLIGHT);
        CountDownLatch done = new CountDownLatch(CALLS);
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < CALLS; i++) {
            assertTrue(slots.tryAcquire(60, TimeUnit.SECONDS), "no call ended for a minute");
            int seed = i;
            byte[] request = Bytes.pattern(SIZE, seed);
            ClientCalls.asyncUnaryCall(channel.newCall(StockGrpc.ECHO, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.MINUTES)),
                    request, new StreamObserver<>() {
                        private int answers;

                        @Override
                        public void onNext(byte[] value) {
                            answers++;
                            if (!Arrays.equals(request, value)) {
                                problems.add("call " + seed + ": another answer (" + value.length + " bytes)");
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            problems.add("call " + seed + ": " + io.grpc.Status.fromThrowable(t));
                            end();
                        }

                        @Override
                        public void onCompleted() {
                            if (answers != 1) {
                                problems.add("call " + seed + ": " + answers + " answers");
                            }
                            end();
                        }

                        private void end() {
                            slots.release();
                            done.countDown();
                        }
                    });
        }
        assertTrue(done.await(5, TimeUnit.MINUTES), done.getCount() + " calls never ended");
        List<String> seen = List.copyOf(problems);
        assertTrue(seen.isEmpty(), () -> seen.size() + " calls went wrong, e.g. " + seen.get(0));
        assertEquals(1, registry.get("rdmarpc.server.connections.opened").tag("transport", "h2").counter().count(),
                "one connection served every call: none failed and was replaced");
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> serverPool.inUseBytes() == 0,
                () -> "the server freed what the connection held: " + serverPool.inUseBytes() + " bytes in use");
    }
}
