package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Contexts;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server's connections as grpc sees them, over TCP on 127.0.0.1: one grpc transport per
 * rdmarpc connection (what a {@link ServerTransportFilter} sees, and each call's attributes),
 * server keepalive (PINGs counted by a {@link FrameProxy}; a client that stops answering loses its
 * connection, the server carries on), {@code maxConnectionAge} (calls move to a new connection
 * without failing) and {@code maxConnectionIdle} (an idle connection is closed, the next call
 * reconnects). Keepalive times below grpc's 10 s minimum are set with {@code keepAliveUnclamped}.
 */
@ExtendWith(SlabLeakCheck.class)
class ServerConnectionsTest {
    private static final long MILLIS = 1_000_000L;
    private static final Attributes.Key<Integer> TRANSPORT_NUMBER = Attributes.Key.create("test-transport-number");
    private static final Context.Key<Attributes> CALL_ATTRIBUTES = Context.key("test-call-attributes");

    Server server;
    FrameProxy proxy;
    final List<ManagedChannel> channels = new ArrayList<>();
    final List<SocketAddress> readyRemotes = new CopyOnWriteArrayList<>();
    final AtomicInteger terminatedTransports = new AtomicInteger();
    final CountDownLatch hangStarted = new CountDownLatch(1);
    final CompletableFuture<Throwable> hangFailed = new CompletableFuture<>();

    /** A server whose filter numbers its transports, and whose calls record their attributes. */
    private void startServer(UnaryOperator<RdmaServerBuilder> configure) throws IOException {
        AtomicInteger numbers = new AtomicInteger();
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    Integer n = CALL_ATTRIBUTES.get().get(TRANSPORT_NUMBER);
                    obs.onNext(req.equals("which transport?") ? String.valueOf(n) : req);
                    obs.onCompleted();
                }))
                .addMethod(SemanticsTest.HANG, ServerCalls.asyncBidiStreamingCall(obs -> {
                    hangStarted.countDown();
                    return new StreamObserver<>() {
                        @Override
                        public void onNext(String value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                            hangFailed.complete(t);
                        }

                        @Override
                        public void onCompleted() {
                            obs.onCompleted();
                        }
                    };
                }))
                .build();
        ServerInterceptor attributesToContext = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                return Contexts.interceptCall(Context.current().withValue(CALL_ATTRIBUTES, call.getAttributes()), call, headers, next);
            }
        };
        RdmaServerBuilder b = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                .addService(ServerInterceptors.intercept(service, attributesToContext))
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attrs) {
                        readyRemotes.add(attrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                        return attrs.toBuilder().set(TRANSPORT_NUMBER, numbers.incrementAndGet()).build();
                    }

                    @Override
                    public void transportTerminated(Attributes attrs) {
                        terminatedTransports.incrementAndGet();
                    }
                });
        server = configure.apply(b).build().start();
        proxy = new FrameProxy(server.getPort());
    }

    private ManagedChannel channel(int port) {
        ManagedChannel c = RdmaChannelBuilder.forAddress("127.0.0.1", port).transportMode(TransportMode.TCP).build();
        channels.add(c);
        return c;
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            c.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (proxy != null) {
            proxy.close();
        }
        if (server != null) {
            server.shutdownNow();
            assertTrue(server.awaitTermination(60, TimeUnit.SECONDS), "the server terminated");
        }
    }

    private static String call(ManagedChannel c, String request) {
        return ClientCalls.blockingUnaryCall(c, SemanticsTest.ECHO, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), request);
    }

    /** An open bidi call the server never ends by itself, and its close status. */
    private record Hang(ClientCall<String, String> call, CompletableFuture<Status> closed) {
    }

    private static Hang startHang(ManagedChannel c) {
        ClientCall<String, String> hang = c.newCall(SemanticsTest.HANG, CallOptions.DEFAULT);
        CompletableFuture<Status> closed = new CompletableFuture<>();
        hang.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        hang.sendMessage("x");
        return new Hang(hang, closed);
    }

    @Test
    void eachConnectionIsOneTransportForFiltersAndCalls() throws Exception {
        startServer(b -> b);
        ManagedChannel first = channel(server.getPort());
        ManagedChannel second = channel(server.getPort());
        String firstNumber = call(first, "which transport?");
        String secondNumber = call(second, "which transport?");
        assertEquals(2, readyRemotes.size(), "one transportReady per connection: " + readyRemotes);
        Set<SocketAddress> distinct = new HashSet<>(readyRemotes);
        assertEquals(2, distinct.size(), "two remote addresses: " + readyRemotes);
        for (SocketAddress a : readyRemotes) {
            assertTrue(assertInstanceOf(InetSocketAddress.class, a).getAddress().isLoopbackAddress(), a.toString());
        }
        assertNotEquals(firstNumber, secondNumber, "each call carries its own connection's transport attributes");
        assertEquals(firstNumber, call(first, "which transport?"), "a channel's calls stay on its transport");
        assertEquals(secondNumber, call(second, "which transport?"));

        first.shutdown();
        assertTrue(first.awaitTermination(60, TimeUnit.SECONDS));
        Await.until(() -> terminatedTransports.get() == 1, "the first channel's transport terminated");
        assertEquals("still", call(second, "still"), "the other connection carries on");
        assertEquals(2, readyRemotes.size());
    }

    @Test
    void keepAliveTimePingsTheClientAndAnsweredPingsKeepTheConnection() throws Exception {
        // PINGs often, and a timeout no busy machine's answer takes: an answered PING must keep the connection
        startServer(b -> b.keepAliveUnclamped(50 * MILLIS, 30_000 * MILLIS));
        ManagedChannel c = channel(proxy.port());
        assertEquals("a", call(c, "a"));
        Await.until(() -> proxy.clientPingAcks.get() >= 3, "three server PINGs answered by the client");
        assertTrue(proxy.serverPings.get() >= 3);
        assertEquals("b", call(c, "b"));
        assertEquals(1, proxy.connections.get(), "answered keepalive keeps the one connection");
        assertEquals(0, terminatedTransports.get());
    }

    @Test
    void aClientThatStopsAnsweringLosesItsConnectionAndTheServerCarriesOn() throws Exception {
        long time = 200;
        long timeout = 500;
        startServer(b -> b.keepAliveUnclamped(time * MILLIS, timeout * MILLIS));
        ManagedChannel gone = channel(proxy.port());
        startHang(gone);
        assertTrue(hangStarted.await(60, TimeUnit.SECONDS));
        proxy.freeze();
        // The server's call on that connection ends when keepalive closes it (the frozen client never learns): nothing
        // else would end it, so its end is keepalive's doing, however long the machine took to get there.
        Throwable failure = hangFailed.get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.CANCELLED, Status.fromThrowable(failure).getCode(), failure.toString());
        Await.until(() -> terminatedTransports.get() == 1, "the connection's transport terminated");
        assertTrue(proxy.serverPings.get() >= 1, "the server sent a keepalive PING");

        ManagedChannel other = channel(server.getPort());
        assertEquals("served", call(other, "served"));
    }

    @Test
    void maxConnectionAgeMovesNewCallsToANewConnectionWithoutFailures() throws Exception {
        startServer(b -> b.maxConnectionAge(1, TimeUnit.SECONDS));
        ManagedChannel c = channel(proxy.port());
        assertEquals("first", call(c, "first"));
        // A stream open across the GOAWAY finishes normally on the old connection.
        Hang hang = startHang(c);
        assertTrue(hangStarted.await(60, TimeUnit.SECONDS));
        AtomicInteger calls = new AtomicInteger();
        Await.until(() -> {
            String r = "call " + calls.getAndIncrement();
            // no call fails across a GOAWAY: core's two-step GOAWAY serves streams the client opened before it heard
            assertEquals(r, call(c, r));
            return proxy.connections.get() >= 3;
        }, () -> "the connection aged out twice (" + proxy.connections.get() + " connections)");
        hang.call().halfClose();
        assertEquals(Status.Code.OK, hang.closed().get(60, TimeUnit.SECONDS).getCode(), "the call open at the GOAWAY finished");
        assertTrue(readyRemotes.size() >= 3, readyRemotes.toString());
        Await.until(() -> terminatedTransports.get() >= 1, "aged-out transports terminated");
    }

    @Test
    void maxConnectionAgeGraceClosesAConnectionWhoseCallsOutstayIt() throws Exception {
        startServer(b -> b.maxConnectionAge(1, TimeUnit.SECONDS).maxConnectionAgeGrace(200, TimeUnit.MILLISECONDS));
        ManagedChannel c = channel(server.getPort());
        Hang hang = startHang(c);
        assertTrue(hangStarted.await(60, TimeUnit.SECONDS));
        Status s = hang.closed().get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
        assertNotNull(hangFailed.get(60, TimeUnit.SECONDS), "the server's call ended too");
        assertEquals("after", call(c, "after"), "the channel reconnects");
    }

    @Test
    void maxConnectionIdleClosesAnIdleConnectionAndTheNextCallReconnects() throws Exception {
        startServer(b -> b.maxConnectionIdle(1, TimeUnit.SECONDS));
        ManagedChannel c = channel(proxy.port());
        assertEquals("a", call(c, "a"));
        Await.until(() -> terminatedTransports.get() == 1, "the idle connection's transport terminated");
        // the close reaches the client a moment later (through the proxy): a call sent before it arrives would go
        // out on the closing connection, so the next call is the one made once the client knows
        Await.until(() -> c.getState(false) == io.grpc.ConnectivityState.IDLE,
                () -> "the client saw its connection closed (channel IDLE, not " + c.getState(false) + ")");
        assertEquals("b", call(c, "b"));
        assertEquals(2, proxy.connections.get(), "the next call opened a new connection");
        assertEquals(2, readyRemotes.size());
    }

    @Test
    void serverShutdownNowEndsEveryConnectionsCalls() throws Exception {
        startServer(b -> b);
        ManagedChannel c = channel(server.getPort());
        Hang hang = startHang(c);
        assertTrue(hangStarted.await(60, TimeUnit.SECONDS));
        server.shutdown();
        // Best effort: the open call never ends by itself, so no wait can prove the server would wait for ever; this
        // looks for a short while, which may miss a wrong termination on a slow machine but never fails a right one.
        assertTrue(!server.awaitTermination(200, TimeUnit.MILLISECONDS), "a graceful shutdown waits for the open call");
        server.shutdownNow();
        assertTrue(server.awaitTermination(60, TimeUnit.SECONDS));
        StatusRuntimeException e = hang.closed().thenApply(Status::asRuntimeException).get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        assertEquals(1, terminatedTransports.get());
    }
}
