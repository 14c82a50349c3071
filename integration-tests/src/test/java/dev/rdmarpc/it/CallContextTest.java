package dev.rdmarpc.it;

import dev.rdmarpc.core.CallContext;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Deadline and cancellation across two hops on the native API: the test's client calls server A, whose handler calls
 * server B. B's call inherits A's deadline and is cancelled when the client cancels A's call; a call A makes detached
 * ({@code CallContext.ROOT.run}) has neither.
 */
class CallContextTest extends LoopbackTest {
    private static final String NAME = "test.Hops";
    /** On A: calls B's WAIT with the same request and relays its answer; detached when the request starts with 'D'. */
    static final MethodDescriptor<byte[], byte[]> RELAY =
            Bytes.method(NAME + "/Relay", MethodType.UNARY);
    /** On B: keeps the call open for the test to answer. */
    static final MethodDescriptor<byte[], byte[]> WAIT =
            Bytes.method(NAME + "/Wait", MethodType.UNARY);

    private RpcServer serverB;
    private RpcChannel toB;
    /** B's calls, as they reach its handler. */
    private final BlockingQueue<ServerCallStreamObserver<byte[]>> waiting = new LinkedBlockingQueue<>();
    private final CountDownLatch bCancelled = new CountDownLatch(1);
    private final CountDownLatch aCancelled = new CountDownLatch(1);
    /** How A's call to B ended. */
    private final CompletableFuture<Status> childClosed = new CompletableFuture<>();
    /** What CallContext.current() was inside A's handler. */
    private volatile CallContext aContext;
    /** What CallContext.current() was as A's call to B completed. */
    private volatile CallContext contextInCallback;

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.addService(ServiceDefinition.builder(NAME).addMethod(RELAY, ServerCalls.asyncUnaryCall(this::relay)).build());
    }

    @BeforeEach
    void startServerB() throws IOException {
        serverB = RpcServer.forPort(0).addService(ServiceDefinition.builder(NAME)
                .addMethod(WAIT, ServerCalls.asyncUnaryCall((req, obs) -> {
                    ServerCallStreamObserver<byte[]> call = (ServerCallStreamObserver<byte[]>) obs;
                    call.setOnCancelHandler(bCancelled::countDown);
                    waiting.add(call);
                })).build()).build().start();
        toB = RpcChannel.forAddress("127.0.0.1", serverB.getPort()).build();
    }

    @AfterEach
    void stopServerB() throws InterruptedException {
        toB.shutdownNow();
        toB.awaitTermination(60, TimeUnit.SECONDS);
        serverB.shutdownNow();
        serverB.awaitTermination(60, TimeUnit.SECONDS);
    }

    private void relay(byte[] request, StreamObserver<byte[]> obs) {
        ((ServerCallStreamObserver<byte[]>) obs).setOnCancelHandler(aCancelled::countDown);
        aContext = CallContext.current();
        Runnable callB = () -> ClientCalls.asyncUnaryCall(toB.newCall(WAIT, CallOptions.DEFAULT), request, new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                obs.onNext(value);
            }

            @Override
            public void onError(Throwable t) {
                childClosed.complete(Status.fromThrowable(t));
                obs.onError(t);
            }

            @Override
            public void onCompleted() {
                contextInCallback = CallContext.current();
                childClosed.complete(Status.OK);
                obs.onCompleted();
            }
        });
        if (request[0] == 'D') {
            CallContext.ROOT.run(callB);
        } else {
            callB.run();
        }
    }

    /** Starts a RELAY call with a 30 s deadline; returns it (its outcome goes to {@code closed}). */
    private ClientCall<byte[], byte[]> relay(String request, CallKindsTest.Collector<byte[]> closed) {
        ClientCall<byte[], byte[]> call = channel.newCall(RELAY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        ClientCalls.asyncUnaryCall(call, request.getBytes(), closed);
        return call;
    }

    private ServerCallStreamObserver<byte[]> callAtB() throws InterruptedException {
        ServerCallStreamObserver<byte[]> call = waiting.poll(60, TimeUnit.SECONDS);
        assertNotNull(call, "A's call never reached B");
        return call;
    }

    @Test
    void bSeesTheClientsDeadlineAndAnswersThroughA() throws Exception {
        CallKindsTest.Collector<byte[]> closed = new CallKindsTest.Collector<>();
        relay("hello", closed);
        ServerCallStreamObserver<byte[]> atB = callAtB();
        assertNotNull(atB.getDeadline(), "B's call inherited no deadline");
        long remaining = atB.getDeadline().timeRemaining(TimeUnit.MILLISECONDS);
        assertTrue(remaining > 0 && remaining <= 30_000, "B's call has " + remaining + " ms left, not A's deadline");
        assertNotNull(aContext.getDeadline(), "CallContext.current() in A's handler has A's deadline");
        atB.onNext("world".getBytes());
        atB.onCompleted();
        assertEquals(Status.OK, closed.status());
        assertEquals(Status.OK, childClosed.get(60, TimeUnit.SECONDS));
        assertSame(aContext, contextInCallback, "the child call's callbacks run in A's context");
    }

    @Test
    void cancellingTheClientCancelsTheCallBServes() throws Exception {
        CallKindsTest.Collector<byte[]> closed = new CallKindsTest.Collector<>();
        ClientCall<byte[], byte[]> call = relay("hello", closed);
        ServerCallStreamObserver<byte[]> atB = callAtB();
        call.cancel("the client changed its mind", null);
        assertTrue(bCancelled.await(60, TimeUnit.SECONDS), "B's call was never cancelled");
        assertTrue(atB.isCancelled());
        assertEquals(Status.Code.CANCELLED, childClosed.get(60, TimeUnit.SECONDS).getCode(), "A's call to B ended CANCELLED");
        assertEquals(Status.Code.CANCELLED, closed.status().getCode());
        assertTrue(aContext.isCancelled(), "A's context is cancelled");
    }

    @Test
    void aDetachedCallHasNoDeadlineAndOutlivesTheCancelledCall() throws Exception {
        CallKindsTest.Collector<byte[]> closed = new CallKindsTest.Collector<>();
        ClientCall<byte[], byte[]> call = relay("Detached", closed);
        ServerCallStreamObserver<byte[]> atB = callAtB();
        assertNull(atB.getDeadline(), "a detached call inherits no deadline");
        call.cancel("the client changed its mind", null);
        assertTrue(aCancelled.await(60, TimeUnit.SECONDS), "A's call was never cancelled");
        // A's cancel handler has run, after A's context cancelled what it had to: B's call must still be open
        atB.onNext("still here".getBytes());
        atB.onCompleted();
        assertEquals(Status.OK, childClosed.get(60, TimeUnit.SECONDS), "the detached call was not cancelled");
        assertEquals(1, bCancelled.getCount());
    }

    @Test
    void outsideAHandlerTheContextIsRoot() {
        assertSame(CallContext.ROOT, CallContext.current());
        assertNull(CallContext.ROOT.getDeadline());
    }
}
