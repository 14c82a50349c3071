package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.ClientTransport;
import io.grpc.internal.DisconnectError;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.KeepAliveEnforcer;
import io.grpc.internal.ManagedClientTransport;
import io.grpc.internal.SharedResourceHolder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Client keepalive and {@code ClientTransport.ping} over TCP on 127.0.0.1. The channel talks to a
 * real rdmarpc server through a {@link FrameProxy} that counts the PINGs on the wire and can make
 * the server look dead (its connection open, nothing forwarded). Keepalive times are below grpc's
 * 10 s minimum here ({@code keepAliveUnclamped}) so the tests need not wait for it; the server permits them, except
 * where a test checks that it closes the connection of a client that pings too often.
 */
@ExtendWith(SlabLeakCheck.class)
class KeepAliveTest {
    private static final long MILLIS = 1_000_000L;

    Server server;
    FrameProxy proxy;
    ManagedChannel channel;
    final CountDownLatch hangStarted = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        // these clients ping every few milliseconds: the server must permit it (grpc-netty's tests do the same)
        startServer(b -> b.permitKeepAliveTime(0, TimeUnit.NANOSECONDS).permitKeepAliveWithoutCalls(true));
    }

    private void startServer(java.util.function.UnaryOperator<RdmaServerBuilder> limits) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
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
                        }

                        @Override
                        public void onCompleted() {
                            obs.onCompleted();
                        }
                    };
                }))
                .build();
        server = limits.apply(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP))
                .addService(ServerInterceptors.intercept(service)).build().start();
        proxy = new FrameProxy(server.getPort());
    }

    private ManagedChannel channel(long keepAliveMillis, long timeoutMillis, boolean withoutCalls) {
        channel = RdmaChannelBuilder.forAddress("127.0.0.1", proxy.port()).transportMode(TransportMode.TCP)
                .keepAliveUnclamped(keepAliveMillis * MILLIS, timeoutMillis * MILLIS)
                .keepAliveWithoutCalls(withoutCalls)
                .build();
        return channel;
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        proxy.close();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
    }

    /** Opens a HANG call on {@code ch} and waits until the server has it; {@code closed} gets its status. */
    private ClientCall<String, String> startHang(ManagedChannel ch, CompletableFuture<Status> closed) throws InterruptedException {
        ClientCall<String, String> hang = ch.newCall(SemanticsTest.HANG, CallOptions.DEFAULT);
        hang.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        hang.sendMessage("x");
        assertTrue(hangStarted.await(60, TimeUnit.SECONDS));
        return hang;
    }

    @Test
    void pingsWhileACallIsOpenAndTheConnectionStays() throws Exception {
        // PINGs often, and a timeout no busy machine's answer takes: an answered PING must keep the connection
        ManagedChannel ch = channel(50, 30_000, false);
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<String, String> hang = startHang(ch, closed);
        Await.until(() -> proxy.pingAcks.get() >= 3, "three keepalive PINGs answered");
        assertEquals("still", ClientCalls.blockingUnaryCall(ch, SemanticsTest.ECHO, CallOptions.DEFAULT, "still"));
        hang.halfClose();
        assertEquals(Status.Code.OK, closed.get(60, TimeUnit.SECONDS).getCode());
        assertEquals(1, proxy.connections.get(), "answered keepalive keeps the one connection");
    }

    @Test
    void pingsWithoutCallsWhenAllowed() throws Exception {
        ManagedChannel ch = channel(50, 30_000, true);
        assertEquals("a", ClientCalls.blockingUnaryCall(ch, SemanticsTest.ECHO, CallOptions.DEFAULT, "a"));
        int before = proxy.pingAcks.get();
        Await.until(() -> proxy.pingAcks.get() >= before + 3, "keepalive PINGs on an idle connection");
        assertEquals("b", ClientCalls.blockingUnaryCall(ch, SemanticsTest.ECHO, CallOptions.DEFAULT, "b"));
        assertEquals(1, proxy.connections.get());
    }

    @Test
    void aClientPingingMoreOftenThanTheServerPermitsIsDisconnected() throws Exception {
        proxy.close();
        server.shutdownNow();
        assertTrue(server.awaitTermination(60, TimeUnit.SECONDS));
        startServer(b -> b.permitKeepAliveTime(1, TimeUnit.MINUTES)); // calls open: one PING a minute is fine
        ManagedChannel ch = channel(50, 5_000, false);
        CompletableFuture<Status> closed = new CompletableFuture<>();
        startHang(ch, closed);
        Status status = closed.get(60, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNAVAILABLE, status.getCode(), status.toString());
        // grpc's KeepAliveEnforcer allows two strikes: the third early PING closes the connection. How many more the
        // client sent meanwhile depends on timing; what the server answered does not: it ACKs each PING before it
        // judges it, and closes on the third, so exactly three ACKs came back (the proxy counts all it reads, and the
        // client saw the close only after the proxy had read to the end of the server's side).
        assertTrue(proxy.pings.get() >= KeepAliveEnforcer.MAX_PING_STRIKES + 1, proxy.pings.get() + " PINGs sent");
        assertEquals(KeepAliveEnforcer.MAX_PING_STRIKES + 1, proxy.pingAcks.get(), "PINGs the server answered before it closed");
        // a well-behaved client on the same server is served
        try (AutoCloseableChannel polite = new AutoCloseableChannel(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.TCP).build())) {
            assertEquals("ok", ClientCalls.blockingUnaryCall(polite.channel(), SemanticsTest.ECHO, CallOptions.DEFAULT, "ok"));
        }
    }

    /** A channel for try-with-resources. */
    private record AutoCloseableChannel(ManagedChannel channel) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void anUnansweredPingFailsTheCallsUnavailableAndGrpcReconnects() throws Exception {
        ManagedChannel ch = channel(200, 500, false);
        assertEquals("a", ClientCalls.blockingUnaryCall(ch, SemanticsTest.ECHO, CallOptions.DEFAULT, "a"));
        proxy.freeze();
        // No deadline: only keepalive can end this call.
        Future<String> stuck = ClientCalls.futureUnaryCall(ch.newCall(SemanticsTest.ECHO, CallOptions.DEFAULT), "lost");
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> stuck.get(60, TimeUnit.SECONDS));
        StatusRuntimeException sre = assertInstanceOf(StatusRuntimeException.class, e.getCause());
        assertEquals(Status.Code.UNAVAILABLE, sre.getStatus().getCode(), sre.getStatus().toString());
        assertTrue(sre.getStatus().getDescription().contains("Keepalive failed"), sre.getStatus().toString());
        assertTrue(proxy.pings.get() >= 1, "a keepalive PING was sent");
        // grpc opens a new transport (a new connection through the proxy, not frozen) for the next call.
        assertEquals("again", ClientCalls.blockingUnaryCall(ch, SemanticsTest.ECHO,
                CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(60, TimeUnit.SECONDS), "again"));
        // at least: a keepalive answer slower than 500 ms (a stalled machine) may cost the new connection too
        assertTrue(proxy.connections.get() >= 2, proxy.connections.get() + " connections");
    }

    @Test
    void transportPingReportsTheRoundTripAndFailsOnceShutDown() throws Exception {
        ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
        try {
            ClientSettings settings = new ClientSettings(TransportMode.TCP, GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE,
                    GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE, 0, 5_000, GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED,
                    GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS, false);
            RdmaClientTransport transport = new RdmaClientTransport(new InetSocketAddress("127.0.0.1", server.getPort()),
                    "127.0.0.1:" + server.getPort(), "test", Attributes.EMPTY, settings, new MethodCache(), timer);
            CountDownLatch ready = new CountDownLatch(1);
            CountDownLatch terminated = new CountDownLatch(1);
            Runnable r = transport.start(new ManagedClientTransport.Listener() {
                @Override
                public void transportShutdown(Status s, DisconnectError e) {
                }

                @Override
                public void transportTerminated() {
                    terminated.countDown();
                }

                @Override
                public void transportReady() {
                    ready.countDown();
                }

                @Override
                public void transportInUse(boolean inUse) {
                }
            });
            if (r != null) {
                r.run();
            }
            assertTrue(ready.await(60, TimeUnit.SECONDS));

            CompletableFuture<Long> rtt = new CompletableFuture<>();
            transport.ping(callback(rtt), Runnable::run);
            assertTrue(rtt.get(60, TimeUnit.SECONDS) > 0);

            Status reason = Status.UNAVAILABLE.withDescription("test shut it down");
            transport.shutdown(reason);
            CompletableFuture<Long> after = new CompletableFuture<>();
            transport.ping(callback(after), Runnable::run);
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> after.get(60, TimeUnit.SECONDS));
            Status failure = assertInstanceOf(StatusRuntimeException.class, e.getCause()).getStatus();
            assertEquals(reason.getCode(), failure.getCode());
            assertEquals(reason.getDescription(), failure.getDescription());
            assertTrue(terminated.await(60, TimeUnit.SECONDS));
        } finally {
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
        }
    }

    private static ClientTransport.PingCallback callback(CompletableFuture<Long> result) {
        return new ClientTransport.PingCallback() {
            @Override
            public void onSuccess(long roundTripTimeNanos) {
                result.complete(roundTripTimeNanos);
            }

            @Override
            public void onFailure(Status cause) {
                result.completeExceptionally(cause.asRuntimeException());
            }
        };
    }
}
