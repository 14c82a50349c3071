package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.internal.channel.ClientConnections;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A generated stub's async unary call runs on a stream the channel recycles ({@link ChannelImpl#startPooledUnary}):
 * only a call that ended by the server's TRAILERS goes back, once; the next call gets it; and everything that can
 * still name the old call (a frame for its id found before it left the table, a connection's snapshot) leaves the new
 * call alone. The fake connection delivers frames on the calling thread and the channel's executor is direct, so when
 * {@code deliver} returns the call's callbacks, and its recycling, have run.
 */
class PooledUnaryCallsTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Client transport = new FakeTransports.Client(pool);
    private ChannelImpl channel;

    @AfterEach
    void noLeaks() {
        if (channel != null) {
            channel.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection connect() throws Exception {
        channel = transport.channel(RpcExecutors.direct());
        CompletableFuture<ClientConnection> ready = channel.connection();
        FakeConnection c = transport.takeGreeted();
        ready.get(60, TimeUnit.SECONDS);
        return c;
    }

    /** Takes the call's HEADERS and request message; returns its stream id. */
    private static int request(FakeConnection c, String expected) throws InterruptedException {
        FakeConnection.Sent headers = c.next();
        assertEquals(FrameType.HEADERS, headers.type());
        FakeConnection.Sent message = c.next();
        assertEquals(FrameType.MESSAGE, message.type());
        assertEquals(expected, StreamFrames.text(message));
        return headers.streamId();
    }

    /** The server answers {@code value} and OK. */
    private void answer(FakeConnection c, int id, String value) {
        c.deliver(Frames.responseHeaders(pool, id, null));
        c.deliver(StreamFrames.message(id, value, 0));
        c.deliver(Frames.trailers(pool, id, Status.OK, null));
    }

    private void unary(String request, StreamObserver<String> observer) {
        assertTrue(channel.startPooledUnary(UNARY, CallOptions.DEFAULT, request, observer));
    }

    @Test
    void anEndedCallsStreamServesTheNextCallAndLateEventsForTheOldIdLeaveItAlone() throws Exception {
        FakeConnection c = connect();
        ClientConnection conn = channel.connection().get(60, TimeUnit.SECONDS);
        RecordingObserver first = new RecordingObserver();
        unary("one", first);
        int firstId = request(c, "one");
        answer(c, firstId, "pong one");
        assertEquals("next:pong one", first.next());
        assertEquals("completed", first.next());
        assertEquals(1, channel.recycled().idle(), "the ended call's stream was kept");
        ClientStream<?, ?> stream = channel.recycled().take();
        channel.recycled().give(stream);

        RecordingObserver second = new RecordingObserver();
        unary("two", second);
        assertEquals(0, channel.recycled().idle(), "the next call took the kept stream");
        int secondId = request(c, "two");
        assertTrue(secondId > firstId);

        // what can still name the first call: frames for its id handed to the object, and the connection's own
        // dispatch of frames for an id that has left its table
        MemorySegment late = MemorySegment.ofArray(StreamFrames.message(firstId, "late", 0));
        assertFalse(stream.onMessageFrame(conn, firstId, FrameHeader.flags(late, 0), late, null, FrameHeader.SIZE,
                (int) late.byteSize() - FrameHeader.SIZE));
        stream.onHeaders(conn, firstId, null);
        stream.onWindow(conn, firstId, 1000);
        stream.onServerCancel(conn, firstId, Status.CANCELLED);
        stream.failLocally(conn, firstId, Status.INTERNAL);
        stream.onTrailers(conn, firstId, Status.DATA_LOSS, null);
        c.deliver(Frames.trailers(pool, firstId, Status.ABORTED, null));
        assertTrue(c.isOpen(), "a late frame for an ended stream is dropped, not a protocol error");

        answer(c, secondId, "pong two");
        assertEquals("next:pong two", second.next());
        assertEquals("completed", second.next());
        assertNull(first.events.poll(), "the first observer heard nothing more");
        assertNull(second.events.poll(), "the second observer got exactly its own call");
        assertEquals(1, channel.recycled().idle());
        assertSame(stream, channel.recycled().take(), "the same stream served both calls");
    }

    /**
     * A call of core's that the application holds (from {@code newCall}) takes the same unary path
     * ({@link DirectUnaryCall#runUnary}, no listener) when given to {@code ClientCalls}, but its stream is never kept:
     * the application may still reach it.
     */
    @Test
    void aCallTheApplicationHoldsTakesTheSameUnaryPathAndIsNeverKept() throws Exception {
        FakeConnection c = connect();
        var call = channel.newCall(UNARY, CallOptions.DEFAULT);
        assertInstanceOf(DirectUnaryCall.class, call);
        RecordingObserver observer = new RecordingObserver();
        dev.rdmarpc.core.ClientCalls.asyncUnaryCall(call, "one", observer);
        answer(c, request(c, "one"), "pong one");
        assertEquals("next:pong one", observer.next());
        assertEquals("completed", observer.next());
        assertEquals(ClientStream.State.CLOSED, ((ClientStream<?, ?>) call).state());
        assertEquals(0, channel.recycled().idle(), "a stream the application holds is not kept");
    }

    @Test
    void callsEndedWhileTheirDrainRunsOnAnotherThreadLeaveTheTableAndAreKept() throws Exception {
        java.util.concurrent.ExecutorService drains = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            channel = transport.channel(drains);
            CompletableFuture<ClientConnection> ready = channel.connection();
            FakeConnection c = transport.takeGreeted();
            ClientConnection conn = ready.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < 2_000; i++) {
                RecordingObserver o = new RecordingObserver();
                unary("q" + i, o);
                int id = request(c, "q" + i);
                // the response's drain runs on the executor's thread while this thread ends the call: whichever
                // finishes last recycles the stream, and only after the stream left the connection's table
                c.deliver(Frames.responseHeaders(pool, id, null));
                c.deliver(StreamFrames.message(id, "a" + i, 0));
                c.deliver(Frames.trailers(pool, id, Status.OK, null));
                assertEquals(0, ClientConnections.openStreams(conn), "call " + i + " ended but is still in the connection's table");
                assertEquals("next:a" + i, o.next());
                assertEquals("completed", o.next());
            }
            Await.until(() -> channel.recycled().idle() >= 1, () -> "no stream was kept");
        } finally {
            channel.shutdownNow();
            drains.shutdown();
        }
    }

    @Test
    void aStaleSnapshotOfAnotherConnectionDoesNotReachTheStreamsNextCall() throws Exception {
        FakeConnection c = connect();
        ClientConnection conn = channel.connection().get(60, TimeUnit.SECONDS);
        RecordingObserver first = new RecordingObserver();
        unary("one", first);
        answer(c, request(c, "one"), "pong");
        assertEquals("next:pong", first.next());
        assertEquals("completed", first.next());
        ClientStream<?, ?> stream = channel.recycled().take();
        assertNotNull(stream);
        channel.recycled().give(stream);
        c.close("gone");

        // the next call goes out on the channel's next connection, where stream ids start again
        RecordingObserver second = new RecordingObserver();
        unary("two", second);
        FakeConnection next = transport.takeGreeted();
        int secondId = request(next, "two");
        assertNotSame(conn, channel.connection().get(60, TimeUnit.SECONDS));
        // a closing connection's list, a GOAWAY's, or a writable signal taken before the stream moved on: not its
        // connection now (a connection that lists its streams takes no new ones), so nothing happens
        stream.transportFailed(conn, Status.UNAVAILABLE);
        stream.onConnectionWritable(conn);
        stream.onWindow(conn, secondId, 1000);
        answer(next, secondId, "pong two");
        assertEquals("next:pong two", second.next());
        assertEquals("completed", second.next());
    }

    @Test
    void aCallEndedOtherThanByTheServersTrailersIsNotKept() throws Exception {
        FakeConnection c = connect();
        RecordingObserver cancelled = new RecordingObserver();
        unary("one", cancelled);
        int id = request(c, "one");
        c.deliver(Frames.cancel(pool, id, Status.RESOURCE_EXHAUSTED.withDescription("server cancelled")));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, assertInstanceOf(StatusException.class, cancelled.next()).getStatus().getCode());
        assertEquals(0, channel.recycled().idle(), "a call the server cancelled is not kept");

        RecordingObserver secondResponse = new RecordingObserver();
        unary("two", secondResponse);
        int next = request(c, "two");
        c.deliver(StreamFrames.message(next, "a", 0));
        c.deliver(StreamFrames.message(next, "b", 0));
        assertEquals(FrameType.CANCEL, c.next().type(), "a second response cancels the call here");
        assertEquals(Status.Code.CANCELLED, assertInstanceOf(StatusException.class, secondResponse.next()).getStatus().getCode());
        c.deliver(Frames.trailers(pool, next, Status.OK, null));
        assertEquals(0, channel.recycled().idle(), "a call this side ended is not kept");
    }

    @Test
    void aConnectionLostUnderTheCallKeepsNothing() throws Exception {
        FakeConnection c = connect();
        RecordingObserver o = new RecordingObserver();
        unary("one", o);
        request(c, "one");
        c.close("gone");
        assertEquals(Status.Code.UNAVAILABLE, assertInstanceOf(StatusException.class, o.next()).getStatus().getCode());
        Await.until(() -> channel.recycled().idle() == 0 && !c.isOpen(), () -> "the lost call was kept");
        assertEquals(0, channel.recycled().idle());
    }

    @Test
    void aCallWithADeadlineRunsOnAKeptStreamAndItsLateExpiryLeavesTheNextCallAlone() throws Exception {
        FakeConnection c = connect();
        CallOptions timed = CallOptions.DEFAULT.withDeadline(Deadline.after(1, TimeUnit.HOURS));
        RecordingObserver first = new RecordingObserver();
        assertTrue(channel.startPooledUnary(UNARY, timed, "one", first));
        answer(c, request(c, "one"), "pong one");
        assertEquals("next:pong one", first.next());
        assertEquals("completed", first.next());
        assertEquals(1, channel.recycled().idle(), "a call with a deadline is kept too");
        ClientStream<?, ?> stream = channel.recycled().take();
        channel.recycled().give(stream);

        RecordingObserver second = new RecordingObserver();
        assertTrue(channel.startPooledUnary(UNARY, timed, "two", second));
        int secondId = request(c, "two");
        // the first call's timer, had it fired just as that call ended: it names the first call, not this one
        stream.deadlineExpired(0);
        answer(c, secondId, "pong two");
        assertEquals("next:pong two", second.next());
        assertEquals("completed", second.next());
        assertNull(second.events.poll(), "the second call ended once, by its answer");
        assertEquals(1, channel.recycled().idle());
    }

    @Test
    void aRequestThatCannotBeSerializedFailsTheCallerAndKeepsNothing() throws Exception {
        FakeConnection c = connect();
        Marshaller<String> failing = new Marshaller<>() {
            @Override
            public int serializedSize(String value) {
                throw new IllegalArgumentException("cannot serialize " + value);
            }

            @Override
            public void write(String value, MemorySegment target) {
                throw new IllegalArgumentException("cannot serialize " + value);
            }

            @Override
            public String parse(MemorySegment source) {
                throw new UnsupportedOperationException();
            }
        };
        MethodDescriptor<String, String> method = MethodDescriptor.create("test.S/Failing",
                MethodDescriptor.MethodType.UNARY, failing, StreamFrames.STRING);
        RecordingObserver o = new RecordingObserver();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> channel.startPooledUnary(method, CallOptions.DEFAULT, "x", o));
        assertTrue(e.getMessage().contains("cannot serialize"));
        assertEquals(Status.Code.CANCELLED, assertInstanceOf(StatusException.class, o.next()).getStatus().getCode());
        assertEquals(0, channel.recycled().idle());
        assertEquals(FrameType.HEADERS, c.next().type(), "the call had opened");
        assertEquals(FrameType.CANCEL, c.next().type(), "and is cancelled on the server");
        // the channel still serves pooled calls
        RecordingObserver next = new RecordingObserver();
        unary("fine", next);
        answer(c, request(c, "fine"), "ok");
        assertEquals("next:ok", next.next());
        assertEquals("completed", next.next());
        assertEquals(1, channel.recycled().idle());
    }
}
