package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.ForwardingServerCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.server.ServerConnection;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.STRING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server connection recycles the stream of a call that {@link ServerCalls}' single-request handler ran straight:
 * once the response observer ended the call and let it go, the drain delivered the end and the stream left the
 * connection, the connection's next call gets it; a response observer kept by the service answers from then on as an
 * ended call of its own method and never reaches the stream's next call. The fake connection delivers frames on the
 * calling thread and the executor is direct, so a call's whole life has run when {@code deliver} returns.
 */
class PooledServerStreamsTest {
    private static final MethodDescriptor<String, String> ECHO =
            MethodDescriptor.create("test.S/Echo", MethodDescriptor.MethodType.UNARY, STRING, STRING);
    private static final MethodDescriptor<String, String> HOLD =
            MethodDescriptor.create("test.S/Hold", MethodDescriptor.MethodType.UNARY, STRING, STRING);
    private static final MethodDescriptor<String, String> WRAPPED =
            MethodDescriptor.create("test.S/Wrapped", MethodDescriptor.MethodType.UNARY, STRING, STRING);
    private static final MethodDescriptor<String, String> PEEK =
            MethodDescriptor.create("test.S/Peek", MethodDescriptor.MethodType.UNARY, STRING, STRING);

    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Server transport = new FakeTransports.Server(pool);
    private ServerImpl server;
    private ServerConnection connection;
    private int nextStream = 1;
    /** Observers of ECHO calls, kept after the call ended. */
    private final BlockingQueue<ServerCallStreamObserver<String>> echoed = new LinkedBlockingQueue<>();
    /** Observers of HOLD calls, which the service answers later. */
    private final BlockingQueue<ServerCallStreamObserver<String>> held = new LinkedBlockingQueue<>();

    @AfterEach
    void noLeaks() {
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection start() throws Exception {
        ServerCallHandler<String, String> echo = ServerCalls.asyncUnaryCall((String request, StreamObserver<String> o) -> {
            o.onNext("re:" + request);
            o.onCompleted();
            echoed.add((ServerCallStreamObserver<String>) o);
        });
        ServerCallHandler<String, String> hold = ServerCalls.asyncUnaryCall(
                (String request, StreamObserver<String> o) -> held.add((ServerCallStreamObserver<String>) o));
        ServerCallHandler<String, String> wrapped = (call, headers) -> echo.startCall(new ForwardingServerCall<>() {
            @Override
            protected ServerCall<String, String> delegate() {
                return call;
            }
        }, headers);
        ServerCallHandler<String, String> peek = (call, headers) -> {
            connection = (ServerConnection) call.getConnection();
            call.close(Status.OK, new Metadata());
            return new ServerCall.Listener<>() {
            };
        };
        ServiceDefinition service = ServiceDefinition.builder("test.S").addMethod(ECHO, echo).addMethod(HOLD, hold)
                .addMethod(WRAPPED, wrapped).addMethod(PEEK, peek).build();
        server = transport.serve(service);
        FakeConnection c = transport.acceptGreeted();
        int id = open(c, PEEK, 0);
        assertEquals(Status.Code.OK, trailers(c, id).status().getCode());
        assertNotNull(connection);
        return c;
    }

    /** Opens the next stream of {@code method}, with a timeout when {@code timeoutNanos} > 0; returns its id. */
    private int open(FakeConnection c, MethodDescriptor<String, String> method, long timeoutNanos) {
        int id = nextStream;
        nextStream += 2;
        c.deliver(StreamFrames.requestHeaders(pool, id, method, false, timeoutNanos));
        return id;
    }

    private static Trailers trailers(FakeConnection c, int id) throws InterruptedException {
        FakeConnection.Sent t = c.next(FrameType.TRAILERS);
        assertEquals(id, t.streamId());
        return Frames.decodeTrailers(t.payloadSegment());
    }

    /** One call of {@code method} with the request "hi", answered "re:hi" and OK. */
    private void echoes(FakeConnection c, MethodDescriptor<String, String> method, long timeoutNanos) throws Exception {
        int id = open(c, method, timeoutNanos);
        c.deliver(StreamFrames.message(id, "hi", FrameFlags.END_STREAM));
        FakeConnection.Sent m = c.next(FrameType.MESSAGE);
        assertEquals(id, m.streamId());
        assertEquals("re:hi", StreamFrames.text(m));
        assertEquals(Status.Code.OK, trailers(c, id).status().getCode());
    }

    @Test
    void anEndedCallsStreamServesTheConnectionsNextCall() throws Exception {
        FakeConnection c = start();
        echoes(c, ECHO, 0);
        assertEquals(1, connection.recycled().idle(), "the ended call's stream was kept");
        ServerStream<?, ?> stream = connection.recycled().take();
        connection.recycled().give(stream);
        echoes(c, ECHO, 0);
        assertEquals(1, connection.recycled().idle());
        assertSame(stream, connection.recycled().take(), "the second call ran on the first call's stream");
    }

    @Test
    void aKeptObserverAnswersAsAnEndedCallOfItsOwnMethodWhileItsStreamServesAnother() throws Exception {
        FakeConnection c = start();
        echoes(c, ECHO, 0);
        ServerCallStreamObserver<String> stale = echoed.poll(60, TimeUnit.SECONDS);
        assertNotNull(stale);
        assertEquals(1, connection.recycled().idle());

        int holdId = open(c, HOLD, 0);
        c.deliver(StreamFrames.message(holdId, "wait", FrameFlags.END_STREAM));
        ServerCallStreamObserver<String> live = held.poll(60, TimeUnit.SECONDS);
        assertNotNull(live);
        assertEquals(0, connection.recycled().idle(), "the held call runs on the kept stream");
        assertTrue(live.isReady());
        assertSame(HOLD, live.getMethodDescriptor());

        assertSame(ECHO, stale.getMethodDescriptor(), "the stale observer still names its own method");
        assertFalse(stale.isReady());
        assertNull(stale.getDeadline());
        stale.request(5);
        c.deliver(Frames.cancel(pool, holdId, Status.CANCELLED.withDescription("client gave up")));
        assertTrue(live.isCancelled());
        assertFalse(stale.isCancelled(), "the stale observer does not see the next call's cancel");
        assertThrows(IllegalStateException.class, () -> stale.onNext("late"));
        stale.onCompleted(); // ignored: it completed before

        live.onCompleted(); // ended by the client's cancel: nothing goes out, and the stream is let go
        assertEquals(1, connection.recycled().idle(), "a call the client cancelled is kept once its observer ends it");
        echoes(c, ECHO, 0);
    }

    @Test
    void aCallBehindAnInterceptorIsNotKeptAndACallWithADeadlineIs() throws Exception {
        FakeConnection c = start();
        echoes(c, WRAPPED, 0);
        assertEquals(0, connection.recycled().idle(), "an interceptor may keep the call");
        echoes(c, ECHO, TimeUnit.HOURS.toNanos(1));
        assertEquals(1, connection.recycled().idle(), "a call with a deadline is kept");
        echoes(c, ECHO, 0);
        assertEquals(1, connection.recycled().idle());
        echoes(c, ECHO, TimeUnit.HOURS.toNanos(1));
        assertEquals(1, connection.recycled().idle(), "a call with a deadline takes a kept stream");
        echoes(c, WRAPPED, 0);
        assertEquals(0, connection.recycled().idle(), "a kept stream serving a wrapped call is not kept again");
    }

    @Test
    void aCallWhoseObserverNeverEndsItIsNotKept() throws Exception {
        FakeConnection c = start();
        int id = open(c, HOLD, 0);
        c.deliver(StreamFrames.message(id, "wait", FrameFlags.END_STREAM));
        ServerCallStreamObserver<String> live = held.poll(60, TimeUnit.SECONDS);
        assertNotNull(live);
        c.deliver(Frames.cancel(pool, id, Status.CANCELLED.withDescription("client gave up")));
        assertTrue(live.isCancelled());
        assertEquals(0, connection.recycled().idle(), "the service may still use its observer");
        echoes(c, ECHO, 0);
        assertEquals(1, connection.recycled().idle(), "only the call that ended through its observer was kept");
    }

    @Test
    void lateFramesForARecycledStreamsOldIdAreDropped() throws Exception {
        FakeConnection c = start();
        echoes(c, ECHO, 0);
        ServerStream<?, ?> stream = connection.recycled().take();
        assertNotNull(stream);
        connection.recycled().give(stream);
        int holdId = open(c, HOLD, 0);
        c.deliver(StreamFrames.message(holdId, "wait", FrameFlags.END_STREAM));
        ServerCallStreamObserver<String> live = held.poll(60, TimeUnit.SECONDS);
        assertNotNull(live);
        int oldId = holdId - 2;
        // a frame the connection found for the old id just before the stream ended, handed over after it moved on
        assertTrue(stream.onWindow(oldId, 1000), "reported late, for the connection to charge");
        assertTrue(stream.onEndStream(oldId), "reported late");
        assertTrue(stream.onClientCancel(oldId, Status.CANCELLED), "reported late");
        stream.deadlineExpired(0); // the old call's timer, had it fired as that call ended
        assertFalse(live.isCancelled(), "the old id's CANCEL and the old call's deadline did not reach the new call");
        live.onNext("answer");
        live.onCompleted();
        FakeConnection.Sent m = c.next(FrameType.MESSAGE);
        assertEquals(holdId, m.streamId());
        assertEquals("answer", StreamFrames.text(m));
        assertEquals(Status.Code.OK, trailers(c, holdId).status().getCode());
    }

}
