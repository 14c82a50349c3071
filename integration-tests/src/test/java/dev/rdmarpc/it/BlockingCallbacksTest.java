package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With the default executors, handlers and callbacks that block hold neither an I/O thread nor the other calls of
 * their connection: each test blocks one on something only another call of the same connection can bring about.
 */
class BlockingCallbacksTest {
    private static final MethodDescriptor<byte[], byte[]> WAIT =
            MethodDescriptor.create("test.Blocking/Wait", MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    private static final MethodDescriptor<byte[], byte[]> ECHO =
            MethodDescriptor.create("test.Blocking/Echo", MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);

    /** What a WAIT handler waits for before it answers. */
    private volatile CountDownLatch waitFor = new CountDownLatch(1);
    private final CountDownLatch waitStarted = new CountDownLatch(1);
    private RpcServer server;
    private RpcChannel channel;
    private long baseline;

    @BeforeEach
    void start() throws IOException {
        baseline = SlabPool.shared().inUseBuffers();
        ServiceDefinition service = ServiceDefinition.builder("test.Blocking")
                .addMethod(WAIT, ServerCalls.asyncUnaryCall(this::waitThenEcho))
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .build();
        server = RpcServer.forPort(0).addService(service).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        waitFor.countDown();
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private void waitThenEcho(byte[] req, StreamObserver<byte[]> obs) {
        waitStarted.countDown();
        try {
            if (!waitFor.await(60, TimeUnit.SECONDS)) {
                obs.onError(Status.DEADLINE_EXCEEDED.withDescription("what the handler waited for never came").asException());
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            obs.onError(Status.CANCELLED.withDescription("interrupted").asException());
            return;
        }
        obs.onNext(req);
        obs.onCompleted();
    }

    @Test
    void aHandlerBlockedUntilALaterCallOfItsConnectionCompletesDoesNotDeadlock() throws Exception {
        byte[] first = Bytes.pattern(100, 1);
        byte[] second = Bytes.pattern(100, 2);
        CompletableFuture<byte[]> waiting = ClientCalls.futureUnaryCall(channel.newCall(WAIT, CallOptions.DEFAULT), first);
        // sent right behind, so that on the server both calls are likely ready in one burst
        CompletableFuture<byte[]> echo = ClientCalls.futureUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), second);
        CountDownLatch echoDone = waitFor;
        echo.whenComplete((r, e) -> echoDone.countDown());
        assertArrayEquals(second, echo.get(60, TimeUnit.SECONDS));
        assertArrayEquals(first, waiting.get(60, TimeUnit.SECONDS));
    }

    @Test
    void whileAHandlerBlocksManyOtherCallsOfItsConnectionComplete() throws Exception {
        CompletableFuture<byte[]> waiting = ClientCalls.futureUnaryCall(channel.newCall(WAIT, CallOptions.DEFAULT), new byte[]{7});
        assertTrue(waitStarted.await(60, TimeUnit.SECONDS), "the blocking handler started");
        List<CompletableFuture<byte[]>> others = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            others.add(ClientCalls.futureUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), Bytes.pattern(64, i)));
        }
        for (int i = 0; i < others.size(); i++) {
            assertArrayEquals(Bytes.pattern(64, i), others.get(i).get(60, TimeUnit.SECONDS));
        }
        waitFor.countDown();
        assertArrayEquals(new byte[]{7}, waiting.get(60, TimeUnit.SECONDS));
    }

    @Test
    void aClientCallbackBlockedUntilAnotherCallOfItsConnectionAnswersDoesNotDeadlock() throws Exception {
        waitFor.countDown(); // WAIT answers at once here: the blocking happens on the client
        CountDownLatch secondAnswered = new CountDownLatch(1);
        CompletableFuture<byte[]> firstSeen = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), new byte[]{1}, new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                try {
                    if (secondAnswered.await(60, TimeUnit.SECONDS)) {
                        firstSeen.complete(value);
                    } else {
                        firstSeen.completeExceptionally(new AssertionError("the second call never answered"));
                    }
                } catch (InterruptedException e) {
                    firstSeen.completeExceptionally(e);
                }
            }

            @Override
            public void onError(Throwable t) {
                firstSeen.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        CompletableFuture<byte[]> second = ClientCalls.futureUnaryCall(channel.newCall(WAIT, CallOptions.DEFAULT), new byte[]{2});
        second.whenComplete((r, e) -> secondAnswered.countDown());
        assertArrayEquals(new byte[]{2}, second.get(60, TimeUnit.SECONDS));
        assertArrayEquals(new byte[]{1}, firstSeen.get(60, TimeUnit.SECONDS));
    }
}
