package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ForwardingClientCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ClientCalls#asyncUnaryCall} against a server that breaks the unary contract, played frame by frame: the
 * observer gets exactly one terminal callback, with trailers of its own. Every case runs on core's call itself (which
 * ends into the observer with no listener, {@link DirectUnaryCall}), on an interceptor's wrapper (a listener), and as a
 * generated stub's call on the channel's recycled streams ({@link ChannelImpl#startPooledUnary}).
 */
class ClientCallsUnaryTest {
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

    /** A new unary call: core's own, or behind an interceptor's wrapper. */
    private ClientCall<String, String> newCall(boolean wrapped) {
        ClientCall<String, String> call = channel.newCall(UNARY, CallOptions.DEFAULT);
        if (!wrapped) {
            return call;
        }
        return new ForwardingClientCall<>() {
            @Override
            protected ClientCall<String, String> delegate() {
                return call;
            }
        };
    }

    /**
     * Starts a unary call as {@code how} says: on core's own call, on an interceptor's wrapper, or as a generated stub
     * does, through the channel's recycled streams.
     */
    private void start(String how, String request, StreamObserver<String> observer) {
        switch (how) {
            case "core" -> ClientCalls.asyncUnaryCall(newCall(false), request, observer);
            case "wrapped" -> ClientCalls.asyncUnaryCall(newCall(true), request, observer);
            case "pooled" -> assertTrue(channel.startPooledUnary(UNARY, CallOptions.DEFAULT, request, observer));
            default -> throw new IllegalArgumentException(how);
        }
    }

    /** Takes the call's HEADERS and request message; returns its stream id. */
    private static int request(FakeConnection c) throws InterruptedException {
        FakeConnection.Sent headers = c.next();
        assertEquals(FrameType.HEADERS, headers.type());
        assertEquals(FrameType.MESSAGE, c.next().type());
        return headers.streamId();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"core", "wrapped", "pooled"})
    void okWithoutAResponseIsInternalWithTrailersOfItsOwn(String how) throws Exception {
        FakeConnection c = connect();
        RecordingObserver o = new RecordingObserver();
        start(how, "ping", o);
        int id = request(c);
        c.deliver(Frames.responseHeaders(pool, id, null));
        c.deliver(Frames.trailers(pool, id, Status.OK, null));
        StatusException e = assertInstanceOf(StatusException.class, o.next());
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertNotNull(e.getTrailers());
        assertEquals(0, o.events.size(), "more than one terminal callback");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"core", "wrapped", "pooled"})
    void aSecondResponseCancelsTheCallAndTheObserverGetsOnlyTheError(String how) throws Exception {
        FakeConnection c = connect();
        RecordingObserver o = new RecordingObserver();
        start(how, "ping", o);
        int id = request(c);
        c.deliver(Frames.responseHeaders(pool, id, null));
        c.deliver(StreamFrames.message(id, "one", 0));
        c.deliver(StreamFrames.message(id, "two", 0));
        assertEquals(FrameType.CANCEL, c.next().type(), "the call is cancelled on the server");
        StatusException e = assertInstanceOf(StatusException.class, o.next());
        assertEquals(Status.Code.CANCELLED, e.getStatus().getCode());
        assertNotNull(e.getTrailers());
        assertEquals(0, o.events.size(), "the first response was delivered after all");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"core", "wrapped", "pooled"})
    void anErrorStatusReachesTheObserverWithTheServersTrailers(String how) throws Exception {
        FakeConnection c = connect();
        RecordingObserver o = new RecordingObserver();
        start(how, "ping", o);
        int id = request(c);
        Metadata md = new Metadata();
        Metadata.Key<String> key = Metadata.Key.ascii("x-why");
        md.put(key, "because");
        c.deliver(Frames.trailers(pool, id, Status.NOT_FOUND.withDescription("gone"), md));
        StatusException e = assertInstanceOf(StatusException.class, o.next());
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        assertEquals("because", e.getTrailers().get(key));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"core", "wrapped", "pooled"})
    void aResponseThenOkIsOneValueThenCompletion(String how) throws Exception {
        FakeConnection c = connect();
        RecordingObserver o = new RecordingObserver();
        start(how, "ping", o);
        int id = request(c);
        c.deliver(Frames.responseHeaders(pool, id, null));
        c.deliver(StreamFrames.message(id, "pong", 0));
        c.deliver(Frames.trailers(pool, id, Status.OK, null));
        assertEquals("next:pong", o.next());
        assertEquals("completed", o.next());
        assertNull(o.events.poll(), "more than one terminal callback");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"core", "wrapped", "pooled"})
    void anObserverThatThrowsOnItsValueCancelsNothingMoreAndTheNextCallIsServed(String how) throws Exception {
        FakeConnection c = connect();
        CompletableFuture<Void> threw = new CompletableFuture<>();
        StreamObserver<String> throwing = new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                threw.complete(null);
                throw new IllegalStateException("the observer failed");
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
        start(how, "ping", throwing);
        int id = request(c);
        c.deliver(StreamFrames.message(id, "pong", 0));
        c.deliver(Frames.trailers(pool, id, Status.OK, null));
        threw.get(60, TimeUnit.SECONDS);
        // the call had ended: the failure is logged, and the channel serves the next call
        RecordingObserver o = new RecordingObserver();
        start(how, "again", o);
        int next = request(c);
        c.deliver(StreamFrames.message(next, "pong", 0));
        c.deliver(Frames.trailers(pool, next, Status.OK, null));
        assertEquals("next:pong", o.next());
        assertEquals("completed", o.next());
    }
}
