package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.BIDI;
import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client side's state machine against a connection without a socket: the test plays the server frame by frame
 * and checks every transition of the client stream diagram, the order of callbacks, and that none runs under the
 * call's lock.
 */
class ClientStreamStatesTest {
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

    private ChannelImpl channel(Executor executor) {
        channel = transport.channel(executor);
        return channel;
    }

    /** Records callbacks in order, checking that none runs while the call's lock is held. */
    static final class Recorder extends ClientCall.Listener<String> {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        final CompletableFuture<Status> closed = new CompletableFuture<>();
        volatile Object call;
        volatile boolean underLock;
        volatile RuntimeException throwOnMessage;

        private void check() {
            if (call != null && Thread.holdsLock(call)) {
                underLock = true;
            }
        }

        @Override
        public void onHeaders(Metadata headers) {
            check();
            events.add("headers");
        }

        @Override
        public void onMessage(String message) {
            check();
            events.add("message:" + message);
            if (throwOnMessage != null) {
                throw throwOnMessage;
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            check();
            events.add("close:" + status.getCode());
            closed.complete(status);
        }

        @Override
        public void onReady() {
            check();
        }

        List<String> all() {
            return List.copyOf(events);
        }
    }

    /** Starts the connection: takes core's HELLO and answers with the server's. */
    private FakeConnection connect() throws InterruptedException {
        return transport.takeGreeted();
    }

    @Test
    void unaryGoesIdleOpenHalfClosedClosedWithCallbacksInOrderOutsideTheLock() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(UNARY, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        r.call = call;
        call.start(r, new Metadata());
        call.sendMessage("ping");
        call.halfClose();
        call.request(1);
        FakeConnection c = transport.take();
        assertEquals(ClientStream.State.IDLE, call.state(), "no HEADERS before the connection is ready");
        transport.greet(c);
        FakeConnection.Sent headers = c.next();
        assertEquals(FrameType.HEADERS, headers.type());
        FakeConnection.Sent msg = c.next();
        assertEquals(FrameType.MESSAGE, msg.type());
        assertTrue((msg.flags() & FrameFlags.END_STREAM) != 0, "the one request ends the client's side");
        assertEquals("ping", StreamFrames.text(msg));
        assertEquals(ClientStream.State.HALF_CLOSED_LOCAL, call.state());
        int id = headers.streamId();
        c.deliver(Frames.responseHeaders(pool, id, new Metadata()));
        c.deliver(StreamFrames.message(id, "pong", 0));
        c.deliver(StreamFrames.trailers(pool, id, Status.OK));
        assertEquals(Status.Code.OK, r.closed.get(60, TimeUnit.SECONDS).getCode());
        assertEquals(List.of("headers", "message:pong", "close:OK"), r.all());
        assertEquals(ClientStream.State.CLOSED, call.state());
        assertFalse(r.underLock, "a callback ran under the call's lock");
    }

    @Test
    void cancelWhileOpenSendsCancelClosesOnceAndDropsLateFrames() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.request(5);
        FakeConnection c = connect();
        int id = c.next(FrameType.HEADERS).streamId();
        assertEquals(ClientStream.State.OPEN, call.state());
        call.cancel("user gave up", null);
        FakeConnection.Sent cancel = c.next();
        assertEquals(FrameType.CANCEL, cancel.type());
        assertEquals(id, cancel.streamId());
        assertEquals(Status.Code.CANCELLED, r.closed.get(60, TimeUnit.SECONDS).getCode());
        c.deliver(StreamFrames.message(id, "late", 0));
        c.deliver(StreamFrames.trailers(pool, id, Status.OK));
        call.cancel("twice", null);
        assertEquals(List.of("close:CANCELLED"), r.all(), "one onClose, nothing after it");
        assertTrue(c.isOpen(), "late frames for a cancelled stream are dropped, not a protocol error");
    }

    @Test
    void cancelBeforeTheStreamOpensSendsNothingForIt() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(UNARY, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.cancel("before connecting", null);
        assertEquals(ClientStream.State.CLOSED, call.state());
        FakeConnection c = connect();
        assertEquals(Status.Code.CANCELLED, r.closed.get(60, TimeUnit.SECONDS).getCode());
        // a second call on the connection proves the first left no frame behind
        ClientStream<String, String> next = (ClientStream<String, String>) channel.newCall(UNARY, CallOptions.DEFAULT);
        next.start(new Recorder(), new Metadata());
        next.sendMessage("x");
        next.halfClose();
        FakeConnection.Sent first = c.next();
        assertEquals(FrameType.HEADERS, first.type());
        assertEquals(1, first.streamId(), "the cancelled call never took a stream id");
        next.cancel("done", null);
    }

    @Test
    void halfCloseBeforeTheConnectionIsReadyGoesOutAfterTheHeadersInOrder() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.sendMessage("a");
        call.sendMessage("b");
        call.halfClose();
        FakeConnection c = connect();
        assertEquals(FrameType.HEADERS, c.next().type());
        assertEquals("a", StreamFrames.text(c.next()));
        assertEquals("b", StreamFrames.text(c.next()));
        assertEquals(FrameType.END_STREAM, c.next().type());
        assertEquals(ClientStream.State.HALF_CLOSED_LOCAL, call.state());
        call.cancel("done", null);
    }

    @Test
    void deadlineCancelsTheStreamAndTellsTheServer() throws Exception {
        channel(RpcExecutors.direct());
        // connected first, so the call opens as it starts: its deadline cannot expire while the connection is made
        var ready = channel.connection();
        FakeConnection c = connect();
        ready.get(60, TimeUnit.SECONDS);
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(500, TimeUnit.MILLISECONDS));
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.sendMessage("slow");
        call.halfClose();
        int id = c.next(FrameType.HEADERS).streamId();
        assertEquals(Status.Code.DEADLINE_EXCEEDED, r.closed.get(60, TimeUnit.SECONDS).getCode());
        FakeConnection.Sent cancel = c.next(FrameType.CANCEL);
        assertEquals(id, cancel.streamId());
        assertEquals(Status.Code.DEADLINE_EXCEEDED, Frames.decodeCancel(cancel.payloadSegment()).getCode());
    }

    @Test
    void aServerCancelAfterTheDeadlineEndsTheCallAsDeadlineExceeded() throws Exception {
        channel(RpcExecutors.direct());
        var ready = channel.connection();
        FakeConnection c = connect();
        ready.get(60, TimeUnit.SECONDS);
        // the timer thread is held, so the server's CANCEL (its own deadline fired first) arrives before this side's
        CountDownLatch timerHeld = new CountDownLatch(1);
        CountDownLatch releaseTimer = new CountDownLatch(1);
        RpcExecutors.timer().execute(() -> {
            timerHeld.countDown();
            try {
                releaseTimer.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertTrue(timerHeld.await(60, TimeUnit.SECONDS));
            Deadline deadline = Deadline.after(50, TimeUnit.MILLISECONDS);
            ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(UNARY,
                    CallOptions.DEFAULT.withDeadline(deadline));
            Recorder r = new Recorder();
            call.start(r, new Metadata());
            call.sendMessage("slow");
            call.halfClose();
            int id = c.next(FrameType.HEADERS).streamId();
            Await.until(deadline::isExpired, () -> "the deadline to pass");
            c.deliver(Frames.cancel(pool, id, Status.CANCELLED.withDescription("RST_STREAM CANCEL")));
            Status closed = r.closed.get(60, TimeUnit.SECONDS);
            assertEquals(Status.Code.DEADLINE_EXCEEDED, closed.getCode(), closed.toString());
        } finally {
            releaseTimer.countDown();
        }
    }

    @Test
    void aServerCancelBeforeTheDeadlineStaysCancelled() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(UNARY,
                CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS));
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.sendMessage("x");
        call.halfClose();
        FakeConnection c = connect();
        int id = c.next(FrameType.HEADERS).streamId();
        c.deliver(Frames.cancel(pool, id, Status.CANCELLED));
        assertEquals(Status.Code.CANCELLED, r.closed.get(60, TimeUnit.SECONDS).getCode());
    }

    @Test
    void theConnectionLostFailsOpenCallsUnavailable() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        FakeConnection c = connect();
        c.next(FrameType.HEADERS);
        c.close("peer went away");
        assertEquals(Status.Code.UNAVAILABLE, r.closed.get(60, TimeUnit.SECONDS).getCode());
        assertEquals(ClientStream.State.CLOSED, call.state());
    }

    @Test
    void messagesReceivedBeforeTrailersAreDeliveredBeforeOnClose() throws Exception {
        BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
        channel(tasks::add);
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        call.request(3);
        FakeConnection c = connect();
        int id = c.next(FrameType.HEADERS).streamId();
        c.deliver(Frames.responseHeaders(pool, id, new Metadata()));
        c.deliver(StreamFrames.message(id, "1", 0));
        c.deliver(StreamFrames.message(id, "2", 0));
        c.deliver(StreamFrames.trailers(pool, id, Status.OK));
        assertTrue(r.events.isEmpty(), "nothing runs before the executor does");
        assertEquals(1, tasks.size(), "one drain for all of it");
        tasks.take().run();
        assertEquals(List.of("headers", "message:1", "message:2", "close:OK"), r.all());
        call.cancel("after close", null);
    }

    @Test
    void aListenerThatThrowsCancelsTheCall() throws Exception {
        channel(RpcExecutors.direct());
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        r.throwOnMessage = new IllegalStateException("listener bug");
        call.start(r, new Metadata());
        call.request(2);
        FakeConnection c = connect();
        int id = c.next(FrameType.HEADERS).streamId();
        c.deliver(StreamFrames.message(id, "boom", 0));
        Status s = r.closed.get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.CANCELLED, s.getCode());
        assertTrue(s.getDescription().contains("listener bug"), s.getDescription());
        assertEquals(FrameType.CANCEL, c.next(FrameType.CANCEL).type());
        assertTrue(c.isOpen(), "a listener's bug ends its call, not the connection");
    }

    @Test
    void anExecutorThatRejectsEndsTheCallWithoutHurtingTheConnection() throws Exception {
        channel(task -> {
            throw new RejectedExecutionException("full");
        });
        ClientStream<String, String> call = (ClientStream<String, String>) channel.newCall(BIDI, CallOptions.DEFAULT);
        Recorder r = new Recorder();
        call.start(r, new Metadata());
        // the stream opens on the I/O thread (here: the test's), where its first onReady is refused
        FakeConnection c = connect();
        int id = c.next(FrameType.HEADERS).streamId();
        FakeConnection.Sent cancel = c.next(FrameType.CANCEL);
        assertEquals(id, cancel.streamId());
        c.deliver(Frames.responseHeaders(pool, id, new Metadata()));
        c.deliver(StreamFrames.message(id, "dropped", 0));
        assertTrue(c.isOpen(), "the rejection stays with the call");
        assertEquals(ClientStream.State.CLOSED, call.state());
        assertTrue(r.events.isEmpty(), "a rejecting executor runs no callback");
    }
}
