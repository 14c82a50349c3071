package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * grpc semantics on rdmarpc's wire, with a hand-written service of raw string messages: metadata
 * (ASCII and -bin) both ways, status and description, deadline propagation, half-close,
 * cancellation reaching the server, flow control driven by request(n), compression negotiated in metadata,
 * and the call attributes.
 */
@org.junit.jupiter.api.extension.ExtendWith(SlabLeakCheck.class)
class SemanticsTest {
    static final MethodDescriptor.Marshaller<String> STRING = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };
    static final MethodDescriptor<String, String> ECHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Semantics/Echo")
            .setRequestMarshaller(STRING).setResponseMarshaller(STRING).build();
    static final MethodDescriptor<String, String> FAIL = ECHO.toBuilder().setFullMethodName("test.Semantics/Fail").build();
    static final MethodDescriptor<String, String> HANG = ECHO.toBuilder().setFullMethodName("test.Semantics/Hang")
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING).build();
    static final MethodDescriptor<String, String> ECHO_STREAM = ECHO.toBuilder().setFullMethodName("test.Semantics/EchoStream")
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING).build();
    static final MethodDescriptor<String, String> STREAM = ECHO.toBuilder().setFullMethodName("test.Semantics/Stream")
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).build();
    static final MethodDescriptor<String, String> PACED = ECHO.toBuilder().setFullMethodName("test.Semantics/Paced")
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).build();
    static final MethodDescriptor<String, String> FLAKY = ECHO.toBuilder().setFullMethodName("test.Semantics/Flaky").build();
    static final MethodDescriptor<String, String> SLOW = ECHO.toBuilder().setFullMethodName("test.Semantics/Slow").build();
    static final MethodDescriptor<String, String> COLLECT = ECHO.toBuilder().setFullMethodName("test.Semantics/Collect")
            .setType(MethodDescriptor.MethodType.CLIENT_STREAMING).build();

    static final Metadata.Key<String> ASCII = Metadata.Key.of("x-ascii", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> BIN = Metadata.Key.of("x-blob-bin", Metadata.BINARY_BYTE_MARSHALLER);
    static final byte[] BLOB = {0, 1, 2, (byte) 0xff, '\n', ':', 0x7f};

    final AtomicInteger flakyAttempts = new AtomicInteger();
    final AtomicInteger slowAttempts = new AtomicInteger();
    final AtomicReference<Metadata> serverHeaders = new AtomicReference<>();
    final AtomicReference<ServerCall<?, ?>> serverCall = new AtomicReference<>();
    final CountDownLatch hangCancelled = new CountDownLatch(1);
    final AtomicReference<Long> serverDeadlineMillis = new AtomicReference<>();
    Server server;
    ManagedChannel channel;

    @BeforeEach
    void start() throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    if (Context.current().getDeadline() != null) {
                        serverDeadlineMillis.set(Context.current().getDeadline().timeRemaining(TimeUnit.MILLISECONDS));
                    }
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(FAIL, ServerCalls.asyncUnaryCall((req, obs) -> {
                    Metadata t = new Metadata();
                    t.put(ASCII, "trailer-" + req);
                    t.put(BIN, BLOB);
                    obs.onError(Status.FAILED_PRECONDITION.withDescription("no: " + req + " \u2603").asRuntimeException(t));
                }))
                .addMethod(HANG, ServerCalls.asyncBidiStreamingCall(obs -> {
                    Context.current().addListener(c -> hangCancelled.countDown(), Runnable::run);
                    return new StreamObserver<>() {
                        @Override
                        public void onNext(String value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                        }
                    };
                }))
                .addMethod(ECHO_STREAM, ServerCalls.asyncBidiStreamingCall(obs -> new StreamObserver<>() {
                    @Override
                    public void onNext(String value) {
                        obs.onNext(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        obs.onCompleted();
                    }
                }))
                .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    for (int i = 0; i < Integer.parseInt(req); i++) {
                        obs.onNext("m" + i);
                    }
                    obs.onCompleted();
                }))
                .addMethod(PACED, ServerCalls.asyncServerStreamingCall((req, obs) -> {
                    // grpc's manual flow control: send only from the on-ready handler, which a
                    // transport calls once the new call is ready
                    io.grpc.stub.ServerCallStreamObserver<String> paced = (io.grpc.stub.ServerCallStreamObserver<String>) obs;
                    int total = Integer.parseInt(req);
                    int[] sent = {0};
                    paced.setOnReadyHandler(() -> {
                        while (paced.isReady() && sent[0] < total) {
                            paced.onNext("p" + sent[0]++);
                        }
                        if (sent[0] == total) {
                            sent[0]++;
                            paced.onCompleted();
                        }
                    });
                }))
                .addMethod(FLAKY, ServerCalls.asyncUnaryCall((req, obs) -> {
                    // fails the first two attempts of each request value, as a retry test wants
                    if (flakyAttempts.incrementAndGet() % 3 != 0) {
                        obs.onError(Status.UNAVAILABLE.withDescription("try again").asRuntimeException());
                    } else {
                        obs.onNext(req);
                        obs.onCompleted();
                    }
                }))
                .addMethod(SLOW, ServerCalls.asyncUnaryCall((req, obs) -> {
                    // the first attempt never answers; a hedged second one does
                    if (slowAttempts.incrementAndGet() == 1) {
                        return;
                    }
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(COLLECT, ServerCalls.asyncClientStreamingCall(obs -> new StreamObserver<>() {
                    final StringBuilder sb = new StringBuilder();

                    @Override
                    public void onNext(String value) {
                        sb.append(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        obs.onNext(sb.toString());
                        obs.onCompleted();
                    }
                }))
                .build();
        ServerInterceptor capture = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                serverHeaders.set(headers);
                serverCall.set(call);
                return next.startCall(new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void sendHeaders(Metadata h) {
                        h.put(ASCII, "from-server");
                        h.put(BIN, BLOB);
                        super.sendHeaders(h);
                    }
                }, headers);
            }
        };
        server = configure(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP))
                .addService(ServerInterceptors.intercept(service, capture)).build().start();
        channel = configure(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.TCP)).build();
    }

    /** Hook for variants (executors). */
    RdmaServerBuilder configure(RdmaServerBuilder b) {
        return b;
    }

    /** Hook for variants (executors). */
    RdmaChannelBuilder configure(RdmaChannelBuilder b) {
        return b;
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow();
        server.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        server.awaitTermination(60, TimeUnit.SECONDS);
    }

    @Test
    void metadataBothWaysKeepsBinaryValuesRaw() throws Exception {
        Metadata headers = new Metadata();
        headers.put(ASCII, "from-client");
        headers.put(BIN, BLOB);
        BlockingQueue<Object> events = new ArrayBlockingQueue<>(10);
        ClientCall<String, String> call = channel.newCall(ECHO, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata h) {
                events.add(h);
            }

            @Override
            public void onMessage(String message) {
                events.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                events.add(status);
            }
        }, headers);
        call.request(1);
        call.sendMessage("hi");
        call.halfClose();
        Metadata responseHeaders = (Metadata) events.poll(60, TimeUnit.SECONDS);
        assertEquals("hi", events.poll(60, TimeUnit.SECONDS));
        assertEquals(Status.Code.OK, ((Status) events.poll(60, TimeUnit.SECONDS)).getCode());
        assertEquals("from-client", serverHeaders.get().get(ASCII));
        assertArrayEquals(BLOB, serverHeaders.get().get(BIN));
        assertNotNull(serverHeaders.get().get(io.grpc.Metadata.Key.of("user-agent", Metadata.ASCII_STRING_MARSHALLER)));
        assertEquals("from-server", responseHeaders.get(ASCII));
        assertArrayEquals(BLOB, responseHeaders.get(BIN));
        // grpc negotiates compression in metadata: the client advertises what it can decompress,
        // the server answers with the encoding it uses (identity unless it chose one)
        assertEquals("gzip", serverHeaders.get().get(Metadata.Key.of("grpc-accept-encoding", Metadata.ASCII_STRING_MARSHALLER)));
        assertNull(serverHeaders.get().get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)));
        assertEquals("identity", responseHeaders.get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)));
    }

    @Test
    void statusDescriptionAndTrailersArrive() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(channel, FAIL, CallOptions.DEFAULT, "x"));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode());
        assertEquals("no: x \u2603", e.getStatus().getDescription());
        assertEquals("trailer-x", e.getTrailers().get(ASCII));
        assertArrayEquals(BLOB, e.getTrailers().get(BIN));
    }

    @Test
    void deadlineReachesTheServerContext() {
        assertEquals("d", ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "d"));
        long left = serverDeadlineMillis.get();
        // at most what the client gave; less by however long the call took to reach the handler (far below 30 s)
        assertTrue(left > 30_000 && left <= 60_000, "server deadline " + left + " ms");
    }

    @Test
    void compressionRequestedIsNegotiated() {
        assertEquals("z", ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT.withCompression("gzip"), "z"));
        assertEquals("gzip", serverHeaders.get().get(Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER)));
    }

    @Test
    void halfCloseEndsAClientStream() {
        StreamObserver<String> responses = new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                collected.set(value);
            }

            @Override
            public void onError(Throwable t) {
                done.countDown();
            }

            @Override
            public void onCompleted() {
                done.countDown();
            }
        };
        StreamObserver<String> requests = ClientCalls.asyncClientStreamingCall(channel.newCall(COLLECT, CallOptions.DEFAULT), responses);
        requests.onNext("a");
        requests.onNext("b");
        requests.onNext("c");
        requests.onCompleted();
        try {
            assertTrue(done.await(60, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertEquals("abc", collected.get());
    }

    final AtomicReference<String> collected = new AtomicReference<>();
    final CountDownLatch done = new CountDownLatch(1);

    @Test
    void cancelReachesTheServer() throws Exception {
        ClientCall<String, String> call = channel.newCall(HANG, CallOptions.DEFAULT);
        BlockingQueue<Status> closed = new ArrayBlockingQueue<>(1);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.add(status);
            }
        }, new Metadata());
        call.sendMessage("x");
        Await.until(() -> serverCall.get() != null, "the call reached the server");
        call.cancel("user gave up", null);
        assertEquals(Status.Code.CANCELLED, closed.poll(60, TimeUnit.SECONDS).getCode());
        assertTrue(hangCancelled.await(60, TimeUnit.SECONDS), "the server's context was not cancelled");
    }

    @Test
    void responsesFollowRequestN() throws Exception {
        ClientCall<String, String> call = channel.newCall(STREAM, CallOptions.DEFAULT);
        BlockingQueue<Object> events = new ArrayBlockingQueue<>(100);
        // raised before each request(n): a message delivered beyond it came without being asked for, whenever it came
        AtomicInteger requested = new AtomicInteger();
        AtomicInteger delivered = new AtomicInteger();
        AtomicInteger unasked = new AtomicInteger();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(String message) {
                if (delivered.incrementAndGet() > requested.get()) {
                    unasked.incrementAndGet();
                }
                events.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                events.add(status);
            }
        }, new Metadata());
        call.sendMessage("5");
        call.halfClose();
        requested.addAndGet(2);
        call.request(2);
        assertEquals("m0", events.poll(60, TimeUnit.SECONDS));
        assertEquals("m1", events.poll(60, TimeUnit.SECONDS));
        requested.addAndGet(3);
        call.request(3);
        assertEquals("m2", events.poll(60, TimeUnit.SECONDS));
        assertEquals("m3", events.poll(60, TimeUnit.SECONDS));
        assertEquals("m4", events.poll(60, TimeUnit.SECONDS));
        assertInstanceOf(Status.class, events.poll(60, TimeUnit.SECONDS));
        assertEquals(0, unasked.get(), "messages arrived without request(n)");
    }

    @Test
    void retriesComeFromGrpc() {
        ManagedChannel retrying = configure(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.TCP)).defaultServiceConfig(serviceConfig("retryPolicy", java.util.Map.of(
                        "maxAttempts", 3.0, "initialBackoff", "0.01s", "maxBackoff", "0.1s", "backoffMultiplier", 2.0,
                        "retryableStatusCodes", java.util.List.of("UNAVAILABLE")))).enableRetry().build();
        try {
            assertEquals("r", ClientCalls.blockingUnaryCall(retrying, FLAKY, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "r"));
            assertEquals(3, flakyAttempts.get());
            assertEquals("2", serverHeaders.get().get(Metadata.Key.of("grpc-previous-rpc-attempts", Metadata.ASCII_STRING_MARSHALLER)));
        } finally {
            retrying.shutdownNow();
        }
    }

    @Test
    void hedgingComesFromGrpc() {
        ManagedChannel hedging = configure(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.TCP)).defaultServiceConfig(serviceConfig("hedgingPolicy", java.util.Map.of(
                        "maxAttempts", 2.0, "hedgingDelay", "0.1s"))).enableRetry().build();
        try {
            assertEquals("h", ClientCalls.blockingUnaryCall(hedging, SLOW, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "h"));
            assertEquals(2, slowAttempts.get());
        } finally {
            hedging.shutdownNow();
        }
    }

    @Test
    void idleModeComesFromGrpc() throws Exception {
        ManagedChannel idling = configure(RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .transportMode(TransportMode.TCP)).idleTimeout(1, TimeUnit.SECONDS).build();
        try {
            assertEquals("i", ClientCalls.blockingUnaryCall(idling, ECHO, CallOptions.DEFAULT, "i"));
            Await.until(() -> idling.getState(false) == io.grpc.ConnectivityState.IDLE,
                    () -> "the channel IDLE after its idle timeout, not " + idling.getState(false));
            // and it comes back on the next call
            assertEquals("j", ClientCalls.blockingUnaryCall(idling, ECHO, CallOptions.DEFAULT, "j"));
        } finally {
            idling.shutdownNow();
        }
    }

    static java.util.Map<String, Object> serviceConfig(String policyName, java.util.Map<String, Object> policy) {
        return java.util.Map.of("methodConfig", java.util.List.of(java.util.Map.of(
                "name", java.util.List.of(java.util.Map.of("service", "test.Semantics")),
                policyName, policy)));
    }

    @Test
    void serverOnReadyHandlerStartsAStream() {
        java.util.Iterator<String> it = ClientCalls.blockingServerStreamingCall(channel, PACED,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "50");
        int n = 0;
        while (it.hasNext()) {
            assertEquals("p" + n++, it.next());
        }
        assertEquals(50, n);
    }

    @Test
    void callAttributesNameAddressesAndTransport() {
        AtomicReference<io.grpc.Attributes> clientAttrs = new AtomicReference<>();
        io.grpc.Channel intercepted = io.grpc.ClientInterceptors.intercept(channel, new io.grpc.ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, io.grpc.Channel next) {
                ClientCall<Q, R> call = next.newCall(method, options);
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        super.start(new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                // grpc's retriable stream exposes attributes once the call is committed
                                clientAttrs.set(call.getAttributes());
                                super.onClose(status, trailers);
                            }
                        }, headers);
                    }
                };
            }
        });
        assertEquals("a", ClientCalls.blockingUnaryCall(intercepted, ECHO, CallOptions.DEFAULT, "a"));
        assertEquals("tcp", clientAttrs.get().get(RdmaAttributes.TRANSPORT));
        assertEquals(server.getPort(), ((InetSocketAddress) clientAttrs.get().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)).getPort());
        assertNotNull(clientAttrs.get().get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR));
        io.grpc.Attributes serverAttrs = serverCall.get().getAttributes();
        assertEquals("tcp", serverAttrs.get(RdmaAttributes.TRANSPORT));
        assertEquals(((InetSocketAddress) clientAttrs.get().get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR)).getPort(),
                ((InetSocketAddress) serverAttrs.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)).getPort());
        assertEquals(server.getPort(), ((InetSocketAddress) serverAttrs.get(Grpc.TRANSPORT_ATTR_LOCAL_ADDR)).getPort());
    }

    @Test
    void manyConcurrentCallsOnOneChannel() throws Exception {
        int n = 200;
        CountDownLatch all = new CountDownLatch(n);
        AtomicInteger ok = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            String v = "v" + i;
            ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), v, new StreamObserver<>() {
                @Override
                public void onNext(String value) {
                    if (value.equals(v)) {
                        ok.incrementAndGet();
                    }
                }

                @Override
                public void onError(Throwable t) {
                    all.countDown();
                }

                @Override
                public void onCompleted() {
                    all.countDown();
                }
            });
        }
        assertTrue(all.await(60, TimeUnit.SECONDS));
        assertEquals(n, ok.get());
    }
}
