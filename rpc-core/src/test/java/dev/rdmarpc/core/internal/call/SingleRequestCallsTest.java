package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.ForwardingServerCall;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.rdmarpc.core.internal.call.StreamFrames.STRING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A unary method of {@link ServerCalls} against a client that breaks the single-request contract or goes away, played
 * frame by frame. Every case runs on core's stream starting the method unwrapped ({@link ReleasingHandler}: the
 * stream may be recycled) and behind an interceptor that wraps the call, and must end the same way; a response
 * observer used after its call ended acts on nothing, not on the connection's next call.
 */
class SingleRequestCallsTest {
    private static final MethodDescriptor<String, String> DIRECT =
            MethodDescriptor.create("test.S/Direct", MethodDescriptor.MethodType.UNARY, STRING, STRING);
    private static final MethodDescriptor<String, String> WRAPPED =
            MethodDescriptor.create("test.S/Wrapped", MethodDescriptor.MethodType.UNARY, STRING, STRING);

    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Server transport = new FakeTransports.Server(pool);
    private ServerImpl server;
    private int nextStream = 1;
    /** What the service does with each call; the default echoes. */
    private volatile ServerCalls.UnaryMethod<String, String> behaviour = (request, observer) -> {
        observer.onNext("re:" + request);
        observer.onCompleted();
    };
    private final AtomicInteger invocations = new AtomicInteger();

    @AfterEach
    void noLeaks() {
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection start() throws Exception {
        ServerCallHandler<String, String> core = ServerCalls.asyncUnaryCall((request, observer) -> {
            invocations.incrementAndGet();
            behaviour.invoke(request, observer);
        });
        ServerCallHandler<String, String> wrapped = (call, headers) -> core.startCall(new ForwardingServerCall<>() {
            @Override
            protected ServerCall<String, String> delegate() {
                return call;
            }
        }, headers);
        ServiceDefinition service = ServiceDefinition.builder("test.S").addMethod(DIRECT, core).addMethod(WRAPPED, wrapped).build();
        server = transport.serve(service);
        FakeConnection c = transport.acceptGreeted();
        return c;
    }

    private static MethodDescriptor<String, String> method(boolean wrapped) {
        return wrapped ? WRAPPED : DIRECT;
    }

    /** Opens the next stream of {@code method}; returns its id. */
    private int open(FakeConnection c, MethodDescriptor<String, String> method) {
        int id = nextStream;
        nextStream += 2;
        c.deliver(StreamFrames.requestHeaders(pool, id, method, false, 0));
        return id;
    }

    /** The TRAILERS core sends next (after any HEADERS and MESSAGE frames) for stream {@code id}. */
    private static Trailers trailers(FakeConnection c, int id) throws InterruptedException {
        FakeConnection.Sent t = c.next(FrameType.TRAILERS);
        assertEquals(id, t.streamId());
        return Frames.decodeTrailers(t.payloadSegment());
    }

    /** One ordinary call of {@code method} is answered in full: the connection still serves calls as before. */
    private void echoes(FakeConnection c, MethodDescriptor<String, String> method) throws InterruptedException {
        int id = open(c, method);
        c.deliver(StreamFrames.message(id, "hi", FrameFlags.END_STREAM));
        FakeConnection.Sent h = c.next();
        assertEquals(FrameType.HEADERS, h.type());
        assertEquals(id, h.streamId(), "a frame of an earlier call came before this call's");
        FakeConnection.Sent m = c.next();
        assertEquals(id, m.streamId());
        assertEquals("re:hi", StreamFrames.text(m));
        assertEquals(Status.Code.OK, trailers(c, id).status().getCode());
    }

    @ParameterizedTest(name = "wrapped={0}")
    @ValueSource(booleans = {false, true})
    void aSecondRequestEndsTheCallWithInternalAndTheMethodIsNotInvoked(boolean wrapped) throws Exception {
        FakeConnection c = start();
        int id = open(c, method(wrapped));
        c.deliver(StreamFrames.message(id, "one", 0));
        c.deliver(StreamFrames.message(id, "two", FrameFlags.END_STREAM));
        Trailers t = trailers(c, id);
        assertEquals(Status.Code.INTERNAL, t.status().getCode());
        assertTrue(t.status().getDescription().contains("too many requests"), t.status().getDescription());
        assertEquals(0, invocations.get());
        echoes(c, method(wrapped));
    }

    @ParameterizedTest(name = "wrapped={0}")
    @ValueSource(booleans = {false, true})
    void aHalfCloseWithoutARequestEndsTheCallWithInternal(boolean wrapped) throws Exception {
        FakeConnection c = start();
        int id = open(c, method(wrapped));
        c.deliver(Frames.endStream(pool, id));
        Trailers t = trailers(c, id);
        assertEquals(Status.Code.INTERNAL, t.status().getCode());
        assertTrue(t.status().getDescription().contains("without a request"), t.status().getDescription());
        assertEquals(0, invocations.get());
        echoes(c, method(wrapped));
    }

    @ParameterizedTest(name = "wrapped={0}")
    @ValueSource(booleans = {false, true})
    void aThrowingMethodEndsTheCallWithUnknownAndItsMessage(boolean wrapped) throws Exception {
        FakeConnection c = start();
        behaviour = (request, observer) -> {
            throw new IllegalArgumentException("bad " + request);
        };
        int id = open(c, method(wrapped));
        c.deliver(StreamFrames.message(id, "hi", FrameFlags.END_STREAM));
        Trailers t = trailers(c, id);
        assertEquals(Status.Code.UNKNOWN, t.status().getCode());
        assertEquals("bad hi", t.status().getDescription());
    }

    @ParameterizedTest(name = "wrapped={0}")
    @ValueSource(booleans = {false, true})
    void anObserverUsedAfterItsCallWasCancelledIsIgnoredAndNeverReachesTheNextCall(boolean wrapped) throws Exception {
        FakeConnection c = start();
        CompletableFuture<ServerCallStreamObserver<String>> held = new CompletableFuture<>();
        CountDownLatch cancelled = new CountDownLatch(1);
        behaviour = (request, observer) -> {
            ServerCallStreamObserver<String> o = (ServerCallStreamObserver<String>) observer;
            o.setOnCancelHandler(cancelled::countDown);
            held.complete(o); // answers later, after the call ended
        };
        int id = open(c, method(wrapped));
        c.deliver(StreamFrames.message(id, "hi", FrameFlags.END_STREAM));
        ServerCallStreamObserver<String> late = held.get(60, TimeUnit.SECONDS);
        c.deliver(Frames.cancel(pool, id, Status.CANCELLED.withDescription("client gave up")));
        assertTrue(cancelled.await(60, TimeUnit.SECONDS), "onCancel handler not run");
        assertTrue(late.isCancelled());

        behaviour = (request, observer) -> {
            observer.onNext("re:" + request);
            observer.onCompleted();
        };
        late.onNext("late");
        late.onCompleted();
        // nothing went out for the cancelled call: the next frames are the next call's
        echoes(c, method(wrapped));
    }

    @ParameterizedTest(name = "wrapped={0}")
    @ValueSource(booleans = {false, true})
    void anObserverUsedAfterItsCallCompletedThrowsAndNeverReachesTheNextCall(boolean wrapped) throws Exception {
        FakeConnection c = start();
        CompletableFuture<StreamObserver<String>> held = new CompletableFuture<>();
        behaviour = (request, observer) -> {
            observer.onNext("re:" + request);
            observer.onCompleted();
            held.complete(observer);
        };
        echoes(c, method(wrapped));
        StreamObserver<String> stale = held.get(60, TimeUnit.SECONDS);
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> stale.onNext("stale"));
        assertTrue(e.getMessage().contains("after onCompleted"), e.getMessage());
        stale.onCompleted(); // a second completion is ignored
        behaviour = (request, observer) -> {
            observer.onNext("re:" + request);
            observer.onCompleted();
        };
        echoes(c, method(wrapped));
    }
}
