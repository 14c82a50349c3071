package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which threads grpc runs handlers and call callbacks on over rdmarpc: rdmarpc's shared executor when a builder is
 * given none, the user's executor (or the transport's threads with {@code directExecutor()}) otherwise; and, with the
 * default, a handler or callback that blocks on another call of its connection does not hold that call up.
 */
@ExtendWith(SlabLeakCheck.class)
class DefaultExecutorTest {
    private static final String SHARED_EXECUTOR_THREADS = "rdmarpc-callback";
    private static final MethodDescriptor<String, String> WHERE = SemanticsTest.ECHO.toBuilder()
            .setFullMethodName("test.Executors/Where").build();
    private static final MethodDescriptor<String, String> WAIT = SemanticsTest.ECHO.toBuilder()
            .setFullMethodName("test.Executors/Wait").build();
    private static final MethodDescriptor<String, String> RELEASE = SemanticsTest.ECHO.toBuilder()
            .setFullMethodName("test.Executors/Release").build();

    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicReference<String> handlerThread = new AtomicReference<>();
    private Server server;
    private ManagedChannel channel;
    private ExecutorService userPool;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
        if (userPool != null) {
            userPool.shutdownNow();
        }
    }

    private void start(UnaryOperator<RdmaServerBuilder> serverConfig, UnaryOperator<RdmaChannelBuilder> channelConfig)
            throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Executors")
                .addMethod(WHERE, ServerCalls.asyncUnaryCall((req, obs) -> {
                    handlerThread.set(Thread.currentThread().getName());
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(WAIT, ServerCalls.asyncUnaryCall((req, obs) -> {
                    boolean went = await(released);
                    obs.onNext(went ? "released" : "never released");
                    obs.onCompleted();
                }))
                .addMethod(RELEASE, ServerCalls.asyncUnaryCall((req, obs) -> {
                    released.countDown();
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .build();
        server = serverConfig.apply(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .transportMode(TransportMode.TCP).addService(service)).build().start();
        channel = channelConfig.apply(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.TCP).usePlaintext()).build();
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Calls WHERE and returns the name of the thread the client's onNext ran on. */
    private String callbackThreadOfOneCall() throws Exception {
        CompletableFuture<String> onNextThread = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(WHERE, io.grpc.CallOptions.DEFAULT), "where?", new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                onNextThread.complete(Thread.currentThread().getName());
            }

            @Override
            public void onError(Throwable t) {
                onNextThread.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        return onNextThread.get(60, TimeUnit.SECONDS);
    }

    @Test
    void withoutAnExecutorBothSidesRunOnRdmarpcsSharedExecutor() throws Exception {
        start(b -> b, b -> b);
        String client = callbackThreadOfOneCall();
        assertTrue(client.startsWith(SHARED_EXECUTOR_THREADS), client);
        assertTrue(handlerThread.get().startsWith(SHARED_EXECUTOR_THREADS), handlerThread.get());
    }

    @Test
    void anExecutorTheUserGivesIsTheOneUsed() throws Exception {
        userPool = Executors.newCachedThreadPool(r -> new Thread(r, "user-pool"));
        start(b -> b.executor(userPool), b -> b.executor(userPool));
        assertEquals("user-pool", callbackThreadOfOneCall());
        assertEquals("user-pool", handlerThread.get());
    }

    @Test
    void directExecutorRunsOnTheTransportsThreads() throws Exception {
        start(RdmaServerBuilder::directExecutor, RdmaChannelBuilder::directExecutor);
        String client = callbackThreadOfOneCall();
        assertFalse(client.startsWith(SHARED_EXECUTOR_THREADS), client);
        assertFalse(handlerThread.get().startsWith(SHARED_EXECUTOR_THREADS), handlerThread.get());
    }

    @Test
    void aHandlerBlockedOnAnotherCallOfItsConnectionDoesNotHoldThatCallUp() throws Exception {
        start(b -> b, b -> b);
        var waiting = ClientCalls.futureUnaryCall(channel.newCall(WAIT, io.grpc.CallOptions.DEFAULT), "wait");
        var releasing = ClientCalls.futureUnaryCall(channel.newCall(RELEASE, io.grpc.CallOptions.DEFAULT), "release");
        assertEquals("release", releasing.get(120, TimeUnit.SECONDS));
        assertEquals("released", waiting.get(120, TimeUnit.SECONDS));
    }

    @Test
    void aCallbackBlockedOnAnotherCallsResponseDoesNotHoldThatResponseUp() throws Exception {
        start(b -> b, b -> b);
        CountDownLatch secondAnswered = new CountDownLatch(1);
        CompletableFuture<Boolean> firstSawSecond = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(WHERE, io.grpc.CallOptions.DEFAULT), "first", new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                firstSawSecond.complete(await(secondAnswered));
            }

            @Override
            public void onError(Throwable t) {
                firstSawSecond.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        ClientCalls.asyncUnaryCall(channel.newCall(WHERE, io.grpc.CallOptions.DEFAULT), "second", new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                secondAnswered.countDown();
            }

            @Override
            public void onError(Throwable t) {
                firstSawSecond.completeExceptionally(Status.fromThrowable(t).asRuntimeException());
            }

            @Override
            public void onCompleted() {
            }
        });
        assertTrue(firstSawSecond.get(120, TimeUnit.SECONDS), "the second response reached its observer");
    }
}
