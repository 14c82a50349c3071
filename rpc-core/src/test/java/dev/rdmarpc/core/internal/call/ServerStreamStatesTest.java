package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.rdmarpc.core.internal.call.StreamFrames.BIDI;
import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server side's state machine against a connection without a socket: the test plays the client frame by frame
 * and checks every transition of the server stream diagram, the order of handler callbacks, and that none runs under
 * the call's lock.
 */
class ServerStreamStatesTest {
    private final SlabPool pool = new SlabPool(0, true);
    private final FakeTransports.Server transport = new FakeTransports.Server(pool);
    private ServerImpl server;
    /** What the handler saw, in order. */
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final CompletableFuture<ServerCall<String, String>> started = new CompletableFuture<>();
    private volatile boolean underLock;
    /** What the handler does with each request; default: answer it and close OK. */
    private volatile String onMessage = "answer";

    @AfterEach
    void noLeaks() {
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    private FakeConnection start(Executor executor) throws Exception {
        ConnectionSettings settings = FakeTransports.settings(pool);
        ServerCallHandler<String, String> handler = (call, headers) -> {
            started.complete(call);
            events.add("start");
            call.request(1);
            return new ServerCall.Listener<>() {
                private void check() {
                    if (Thread.holdsLock(call)) {
                        underLock = true;
                    }
                }

                @Override
                public void onMessage(String message) {
                    check();
                    events.add("message:" + message);
                    switch (onMessage) {
                        case "answer" -> {
                            call.sendHeaders(new Metadata());
                            call.sendMessage("re:" + message);
                            call.close(Status.OK, new Metadata());
                        }
                        case "throw" -> throw new IllegalArgumentException("handler bug");
                        default -> call.request(1);
                    }
                }

                @Override
                public void onHalfClose() {
                    check();
                    events.add("halfClose");
                }

                @Override
                public void onCancel() {
                    check();
                    events.add("cancel");
                }

                @Override
                public void onComplete() {
                    check();
                    events.add("complete");
                }
            };
        };
        ServiceDefinition service = ServiceDefinition.builder("test.S").addMethod(UNARY, handler).addMethod(BIDI, handler).build();
        server = new ServerImpl(new InetSocketAddress("127.0.0.1", 0), List.of(service), transport, settings, executor, null, 20_000);
        server.start();
        FakeConnection c = transport.acceptGreeted();
        return c;
    }

    private ServerStream<?, ?> stream() throws Exception {
        return (ServerStream<?, ?>) started.get(60, TimeUnit.SECONDS);
    }

    @Test
    void unaryGoesOpenHalfClosedClosedWithCallbacksInOrderOutsideTheLock() throws Exception {
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, UNARY, false, 0));
        assertEquals(ServerStream.State.OPEN, stream().state());
        c.deliver(StreamFrames.message(1, "hi", FrameFlags.END_STREAM));
        assertEquals(FrameType.HEADERS, c.next().type());
        FakeConnection.Sent m = c.next();
        assertEquals(FrameType.MESSAGE, m.type());
        assertEquals("re:hi", StreamFrames.text(m));
        FakeConnection.Sent t = c.next();
        assertEquals(FrameType.TRAILERS, t.type());
        assertEquals(Status.Code.OK, Frames.decodeTrailers(t.payloadSegment()).status().getCode());
        assertEquals(ServerStream.State.CLOSED, stream().state());
        Await.until(() -> events.contains("complete"), () -> "events: " + events);
        assertEquals(List.of("start", "message:hi", "complete"), List.copyOf(events),
                "the call closed before its half-close was delivered: no onHalfClose after close");
        assertFalse(underLock, "a callback ran under the call's lock");
    }

    @Test
    void framesThatFindTheCallEndedAreReportedLateWhileTheStreamIsStillAtHand() throws Exception {
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        ServerStream<?, ?> s = stream();
        assertFalse(s.onWindow(1, 100), "a WINDOW for an open call is not late");
        s.close(Status.OK, new Metadata());
        assertEquals(FrameType.TRAILERS, c.next(FrameType.TRAILERS).type());
        // the connection may have found the stream in its table just before it ended: what it hands over then is late
        // exactly as a frame that finds no stream, so the connection charges it to the control-frame budget
        assertTrue(s.onClientCancel(1, Status.CANCELLED), "a CANCEL after the TRAILERS went out");
        assertTrue(s.onWindow(1, 100), "a WINDOW after the TRAILERS went out");
        assertTrue(s.onEndStream(1), "an END_STREAM after the TRAILERS went out");
        assertTrue(c.isOpen());
    }

    @Test
    void endStreamMovesToHalfClosedAndIsDeliveredAfterTheMessages() throws Exception {
        onMessage = "keep";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        c.deliver(StreamFrames.message(1, "a", 0));
        c.deliver(StreamFrames.message(1, "b", 0));
        c.deliver(Frames.endStream(pool, 1));
        assertEquals(ServerStream.State.HALF_CLOSED_REMOTE, stream().state());
        Await.until(() -> events.contains("halfClose"), () -> "events: " + events);
        assertEquals(List.of("start", "message:a", "message:b", "halfClose"), List.copyOf(events));
        stream().close(Status.OK, new Metadata());
        assertEquals(FrameType.TRAILERS, c.next(FrameType.TRAILERS).type());
        assertEquals(ServerStream.State.CLOSED, stream().state());
    }

    @Test
    void aMessageAfterEndStreamIsAProtocolErrorThatClosesTheConnection() throws Exception {
        onMessage = "keep";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, true, 0));
        assertEquals(ServerStream.State.HALF_CLOSED_REMOTE, stream().state());
        c.deliver(StreamFrames.message(1, "late", 0));
        assertFalse(c.isOpen());
        assertTrue(c.closeReason.contains("after END_STREAM"), c.closeReason);
        Await.until(() -> events.contains("cancel"), () -> "events: " + events);
        assertEquals(ServerStream.State.CANCELLED, stream().state());
    }

    @Test
    void framesAfterTheClientsEndStreamAreProtocolErrorsEvenOnceTheCallHasEnded() throws Exception {
        onMessage = "keep";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        c.deliver(StreamFrames.message(1, "last", FrameFlags.END_STREAM));
        ServerStream<?, ?> s = stream();
        s.close(Status.OK, new Metadata());
        assertEquals(FrameType.TRAILERS, c.next(FrameType.TRAILERS).type());
        // the connection found the stream just before it ended: a frame after the client's own END_STREAM is still
        // the client's error, not a late frame
        ProtocolException m = assertThrows(ProtocolException.class, () -> s.onMessageFrame(1,
                FrameFlags.BEGIN | FrameFlags.END, java.lang.foreign.MemorySegment.ofArray(new byte[4]), null, 0, 4));
        assertEquals("MESSAGE after END_STREAM on stream 1", m.getMessage());
        ProtocolException e = assertThrows(ProtocolException.class, () -> s.onEndStream(1));
        assertEquals("END_STREAM after END_STREAM on stream 1", e.getMessage());
        assertTrue(s.onClientCancel(1, Status.CANCELLED), "a CANCEL after END_STREAM is allowed: late here");
    }

    @Test
    void cancelFromTheClientCancelsTheHandlerAndLaterSendsAreDropped() throws Exception {
        onMessage = "keep";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        c.deliver(Frames.cancel(pool, 1, Status.CANCELLED.withDescription("client gave up")));
        assertEquals(ServerStream.State.CANCELLED, stream().state());
        Await.until(() -> events.contains("cancel"), () -> "events: " + events);
        @SuppressWarnings("unchecked")
        ServerCall<String, String> call = (ServerCall<String, String>) stream();
        assertTrue(call.isCancelled());
        call.sendMessage("nobody listens");
        call.close(Status.OK, new Metadata());
        assertThrows(IllegalStateException.class, () -> call.close(Status.OK, new Metadata()), "close twice");
        c.deliver(StreamFrames.message(1, "late", 0));
        assertTrue(c.isOpen(), "frames in flight for a cancelled stream are dropped");
        c.deliver(Frames.ping(pool, 7, false));
        assertEquals(FrameType.PING, c.next().type(), "nothing was sent for the cancelled stream before the PING ACK");
    }

    @Test
    void theServerDeadlineCancelsTheHandlerAndTellsTheClient() throws Exception {
        onMessage = "keep";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, TimeUnit.MILLISECONDS.toNanos(200)));
        FakeConnection.Sent t = c.next(FrameType.TRAILERS);
        Trailers trailers = Frames.decodeTrailers(t.payloadSegment());
        assertEquals(Status.Code.DEADLINE_EXCEEDED, trailers.status().getCode());
        Await.until(() -> events.contains("cancel"), () -> "events: " + events);
        assertEquals(ServerStream.State.CANCELLED, stream().state());
    }

    @Test
    void aHandlerThatThrowsFailsItsCallNotTheConnection() throws Exception {
        onMessage = "throw";
        FakeConnection c = start(RpcExecutors.direct());
        c.deliver(StreamFrames.requestHeaders(pool, 1, UNARY, false, 0));
        c.deliver(StreamFrames.message(1, "x", FrameFlags.END_STREAM));
        Trailers t = Frames.decodeTrailers(c.next(FrameType.TRAILERS).payloadSegment());
        assertEquals(Status.Code.UNKNOWN, t.status().getCode());
        assertTrue(t.status().getDescription().contains("handler bug"), t.status().getDescription());
        assertTrue(c.isOpen());
        Await.until(() -> events.contains("cancel"), () -> "events: " + events);
    }

    @Test
    void anExecutorThatRejectsFailsTheCallUnavailable() throws Exception {
        FakeConnection c = start(task -> {
            throw new RejectedExecutionException("no threads left");
        });
        c.deliver(StreamFrames.requestHeaders(pool, 1, UNARY, false, 0));
        Trailers t = Frames.decodeTrailers(c.next(FrameType.TRAILERS).payloadSegment());
        assertEquals(Status.Code.UNAVAILABLE, t.status().getCode());
        assertTrue(t.status().getDescription().contains("rejected"), t.status().getDescription());
        c.deliver(StreamFrames.message(1, "dropped", FrameFlags.END_STREAM));
        assertTrue(c.isOpen(), "the rejection stays with the call");
        assertTrue(events.isEmpty(), "no handler callback ran");
        assertThrows(TimeoutException.class, () -> started.get(0, TimeUnit.MILLISECONDS));
    }

    @Test
    void callbacksWaitForTheExecutorAndRunOneDrainInOrder() throws Exception {
        onMessage = "keep";
        BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
        FakeConnection c = start(tasks::add);
        c.deliver(StreamFrames.requestHeaders(pool, 1, BIDI, false, 0));
        c.deliver(StreamFrames.message(1, "1", 0));
        c.deliver(Frames.endStream(pool, 1));
        assertTrue(events.isEmpty(), "nothing runs before the executor does");
        assertEquals(1, tasks.size(), "one drain for the start, the message and the half-close");
        tasks.take().run();
        assertEquals(List.of("start", "message:1", "halfClose"), List.copyOf(events));
        stream().close(Status.OK, new Metadata());
        while (!tasks.isEmpty()) {
            tasks.take().run();
        }
        assertEquals("complete", List.copyOf(events).get(3));
    }
}
