package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ForwardingClientCall;
import dev.rdmarpc.core.ForwardingServerCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Trailers;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static dev.rdmarpc.core.internal.call.StreamFrames.STRING;
import static dev.rdmarpc.core.internal.call.StreamFrames.UNARY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Calls without metadata make no empty {@link Metadata} inside core, yet whatever application code receives (request
 * headers, response headers, trailers, an exception's trailers) is a non-null instance of its own, never one another
 * call or another callback shares, and an interceptor in front of a call can still add to what it is handed.
 */
class EmptyMetadataTest {
    private static final Metadata.Key<String> KEY = Metadata.Key.ascii("x-added");
    private static final MethodDescriptor<String, String> CORE =
            MethodDescriptor.create("test.S/Core", MethodDescriptor.MethodType.UNARY, STRING, STRING);
    private static final MethodDescriptor<String, String> WRAPPED =
            MethodDescriptor.create("test.S/Wrapped", MethodDescriptor.MethodType.UNARY, STRING, STRING);

    private final SlabPool pool = new SlabPool(0, true);
    private ChannelImpl channel;
    private ServerImpl server;

    @AfterEach
    void noLeaks() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
        Await.until(() -> pool.inUseBuffers() == 0, pool::describeLiveBuffers);
    }

    // ------------------------------------------------------------------ client

    private final FakeTransports.Client client = new FakeTransports.Client(pool);

    private FakeConnection connectClient() throws Exception {
        channel = client.channel(RpcExecutors.direct());
        CompletableFuture<ClientConnection> ready = channel.connection();
        FakeConnection c = client.takeGreeted();
        ready.get(60, TimeUnit.SECONDS);
        return c;
    }

    /** Takes the call's HEADERS and request, answers with empty HEADERS, "pong" and TRAILERS with {@code status} and no metadata; returns the request HEADERS' metadata. */
    private Metadata answer(FakeConnection c, Status status) throws InterruptedException {
        FakeConnection.Sent headers = c.next();
        assertEquals(FrameType.HEADERS, headers.type());
        Metadata sent = Frames.decodeRequestHeaders(headers.payloadSegment()).metadata();
        assertEquals(FrameType.MESSAGE, c.next().type());
        int id = headers.streamId();
        c.deliver(Frames.responseHeaders(pool, id, null));
        if (status.isOk()) {
            c.deliver(StreamFrames.message(id, "pong", 0));
        }
        c.deliver(Frames.trailers(pool, id, status, null));
        return sent;
    }

    /** An application's listener: records what it is handed. */
    private static final class Captured extends ClientCall.Listener<String> {
        volatile Metadata headers;
        final CompletableFuture<Metadata> trailers = new CompletableFuture<>();

        @Override
        public void onHeaders(Metadata h) {
            headers = h;
        }

        @Override
        public void onClose(Status status, Metadata t) {
            trailers.complete(t);
        }
    }

    @Test
    void anApplicationListenerGetsItsOwnMutableHeadersAndTrailersOnEveryCall() throws Exception {
        FakeConnection c = connectClient();
        List<Metadata> seen = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ClientCall<String, String> call = channel.newCall(UNARY, CallOptions.DEFAULT);
            Captured l = new Captured();
            call.start(l, new Metadata());
            call.request(1);
            call.sendMessage("ping");
            call.halfClose();
            answer(c, Status.OK);
            Metadata trailers = l.trailers.get(60, TimeUnit.SECONDS);
            assertNotNull(l.headers, "onHeaders got null");
            assertNotNull(trailers, "onClose got null trailers");
            seen.add(l.headers);
            seen.add(trailers);
        }
        for (int i = 0; i < seen.size(); i++) {
            for (int j = i + 1; j < seen.size(); j++) {
                assertNotSame(seen.get(i), seen.get(j), "two callbacks were handed the same Metadata");
            }
        }
        seen.get(0).put(KEY, "mine");
        assertEquals("mine", seen.get(0).get(KEY));
        for (Metadata m : seen.subList(1, seen.size())) {
            assertTrue(m.isEmpty(), "a change to one call's headers showed in another's: " + m);
        }
    }

    @Test
    void clientCallsSendNoMetadataAndStillHandEveryErrorItsOwnTrailers() throws Exception {
        FakeConnection c = connectClient();
        CompletableFuture<String> ok = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(UNARY, CallOptions.DEFAULT), "ping", observer(ok));
        assertTrue(answer(c, Status.OK).isEmpty());
        assertEquals("pong", ok.get(60, TimeUnit.SECONDS));

        List<Metadata> errorTrailers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            CompletableFuture<String> failed = new CompletableFuture<>();
            ClientCalls.asyncUnaryCall(channel.newCall(UNARY, CallOptions.DEFAULT), "ping", observer(failed));
            answer(c, Status.INTERNAL.withDescription("boom"));
            Throwable e = failed.handle((v, t) -> t).get(60, TimeUnit.SECONDS);
            StatusException se = assertInstanceOf(StatusException.class, e);
            assertEquals(Status.Code.INTERNAL, se.getStatus().getCode());
            assertNotNull(se.getTrailers(), "the exception carries no trailers");
            errorTrailers.add(se.getTrailers());
        }
        assertNotSame(errorTrailers.get(0), errorTrailers.get(1), "two calls' exceptions share their trailers");
    }

    @Test
    void anInterceptorInFrontOfTheCallCanAddToTheHeadersItIsHanded() throws Exception {
        FakeConnection c = connectClient();
        CompletableFuture<String> ok = new CompletableFuture<>();
        ClientCall<String, String> wrapped = new ForwardingClientCall.SimpleForwardingClientCall<>(channel.newCall(UNARY, CallOptions.DEFAULT)) {
            @Override
            public void start(Listener<String> listener, Metadata headers) {
                headers.put(KEY, "by-interceptor");
                super.start(listener, headers);
            }
        };
        ClientCalls.asyncUnaryCall(wrapped, "ping", observer(ok));
        assertEquals("by-interceptor", answer(c, Status.OK).get(KEY));
        assertEquals("pong", ok.get(60, TimeUnit.SECONDS));
    }

    private static StreamObserver<String> observer(CompletableFuture<String> result) {
        return new StreamObserver<>() {
            private String value;

            @Override
            public void onNext(String v) {
                value = v;
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                result.complete(value);
            }
        };
    }

    // ------------------------------------------------------------------ server

    private final FakeTransports.Server serverTransport = new FakeTransports.Server(pool);
    private final List<Metadata> handedToApplication = new CopyOnWriteArrayList<>();
    private int nextStream = 1;

    private FakeConnection startServer() throws Exception {
        // an application's own handler: gets the headers from core directly
        ServerCallHandler<String, String> plain = (call, headers) -> {
            handedToApplication.add(headers);
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(String message) {
                    call.sendHeaders(new Metadata());
                    call.sendMessage("re:" + message);
                    call.close(Status.OK, new Metadata());
                }
            };
        };
        ServerCalls.UnaryMethod<String, String> echo = (request, observer) -> {
            handedToApplication.add(((ServerCallStreamObserver<String>) observer).getRequestHeaders());
            observer.onNext("re:" + request);
            observer.onCompleted();
        };
        ServerCallHandler<String, String> core = ServerCalls.asyncUnaryCall(echo);
        // an interceptor wrapping the call in front of ServerCalls' handler: adds to the headers and trailers it is handed
        ServerCallHandler<String, String> wrapped = (call, headers) -> core.startCall(new ForwardingServerCall<>() {
            @Override
            protected ServerCall<String, String> delegate() {
                return call;
            }

            @Override
            public void sendHeaders(Metadata h) {
                h.put(KEY, "headers-by-interceptor");
                super.sendHeaders(h);
            }

            @Override
            public void close(Status status, Metadata trailers) {
                trailers.put(KEY, "trailers-by-interceptor");
                super.close(status, trailers);
            }
        }, headers);
        ServiceDefinition service = ServiceDefinition.builder("test.S").addMethod(UNARY, plain).addMethod(CORE, core)
                .addMethod(WRAPPED, wrapped).build();
        server = new ServerImpl(new InetSocketAddress("127.0.0.1", 0), List.of(service), serverTransport, FakeTransports.settings(pool),
                RpcExecutors.direct(), null, 20_000);
        server.start();
        FakeConnection c = serverTransport.accept();
        c.deliver(StreamFrames.hello(pool));
        assertEquals(FrameType.HELLO, c.next().type());
        return c;
    }

    /** Sends one call of {@code method} with no metadata; returns the response HEADERS' metadata and the TRAILERS. */
    private Object[] call(FakeConnection c, MethodDescriptor<String, String> method) throws Exception {
        int id = nextStream;
        nextStream += 2;
        c.deliver(StreamFrames.requestHeaders(pool, id, method, false, 0));
        c.deliver(StreamFrames.message(id, "hi", FrameFlags.END_STREAM));
        FakeConnection.Sent h = c.next();
        assertEquals(FrameType.HEADERS, h.type());
        Metadata headers = Frames.decodeResponseHeaders(h.payloadSegment());
        FakeConnection.Sent m = c.next();
        assertEquals("re:hi", StreamFrames.text(m));
        FakeConnection.Sent t = c.next();
        assertEquals(FrameType.TRAILERS, t.type());
        Trailers trailers = Frames.decodeTrailers(t.payloadSegment());
        assertEquals(Status.Code.OK, trailers.status().getCode());
        return new Object[]{headers, trailers.metadata()};
    }

    @Test
    void handlersAndServiceCodeGetTheirOwnMutableRequestHeadersOnEveryCall() throws Exception {
        FakeConnection c = startServer();
        call(c, UNARY);
        call(c, UNARY);
        call(c, CORE);
        call(c, CORE);
        assertEquals(4, handedToApplication.size());
        for (int i = 0; i < handedToApplication.size(); i++) {
            assertNotNull(handedToApplication.get(i), "call " + i + " handed null request headers");
            for (int j = i + 1; j < handedToApplication.size(); j++) {
                assertNotSame(handedToApplication.get(i), handedToApplication.get(j), "two calls share their request headers");
            }
        }
        handedToApplication.get(2).put(KEY, "mine");
        assertEquals("mine", handedToApplication.get(2).get(KEY));
        assertTrue(handedToApplication.get(3).isEmpty());
    }

    @Test
    void serverCallsSendNoMetadataYetAnInterceptorWrappingTheCallCanAddSome() throws Exception {
        FakeConnection c = startServer();
        Object[] plain = call(c, CORE);
        assertTrue(((Metadata) plain[0]).isEmpty());
        assertTrue(((Metadata) plain[1]).isEmpty());
        for (int i = 0; i < 2; i++) {
            Object[] added = call(c, WRAPPED);
            assertEquals("headers-by-interceptor", ((Metadata) added[0]).get(KEY));
            assertEquals(List.of("trailers-by-interceptor"), ((Metadata) added[1]).getAll(KEY),
                    "the trailers an interceptor was handed were not its own");
        }
    }
}
