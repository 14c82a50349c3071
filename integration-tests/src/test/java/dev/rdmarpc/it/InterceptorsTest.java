package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.AbstractStub;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Channel;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ClientInterceptor;
import dev.rdmarpc.core.ClientInterceptors;
import dev.rdmarpc.core.ForwardingClientCall.SimpleForwardingClientCall;
import dev.rdmarpc.core.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import dev.rdmarpc.core.ForwardingServerCall.SimpleForwardingServerCall;
import dev.rdmarpc.core.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.ServerInterceptors;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;

import java.io.IOException;
import java.security.Principal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Client and server interceptors over real loopback sockets (and mutual TLS): headers added on one side and read on
 * the other, grpc-java's order on both sides, calls refused before their handler runs, forwarding calls and
 * listeners that observe every event, interceptors that throw, and streaming calls through all of it.
 */
class InterceptorsTest {
    private static final Metadata.Key<String> TOKEN = Metadata.Key.ascii("authorization");
    private static final Metadata.Key<String> TRACE = Metadata.Key.ascii("x-trace");

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private TestService service;
    private long baseline;

    @BeforeEach
    void baseline() {
        baseline = SlabPool.shared().inUseBuffers();
        service = new TestService();
    }

    @AfterEach
    void closeAndCheckForLeaks() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            if (c instanceof RpcChannel ch) {
                ch.shutdownNow();
                ch.awaitTermination(60, TimeUnit.SECONDS);
            } else if (c instanceof RpcServer s) {
                s.shutdownNow();
                s.awaitTermination(60, TimeUnit.SECONDS);
            }
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcServer server(UnaryOperator<RpcServer.Builder> configure) throws IOException {
        RpcServer s = configure.apply(RpcServer.forPort(0)).build().start();
        toClose.add(s);
        return s;
    }

    private RpcChannel channel(RpcServer s) {
        return channel(s, null);
    }

    private RpcChannel channel(RpcServer s, TlsConfig tls) {
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", s.getPort()).tls(tls).build();
        toClose.add(ch);
        return ch;
    }

    /** A client interceptor that records its name when it intercepts and when its call starts, and adds it to x-trace. */
    private ClientInterceptor clientTracer(String name) {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions options, Channel next) {
                events.add("intercept:" + name);
                return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        String before = headers.get(TRACE);
                        headers.removeAll(TRACE);
                        headers.put(TRACE, before == null ? name : before + "," + name);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /** A server interceptor that records its name and the x-trace header it saw, then passes the call on. */
    private ServerInterceptor serverTracer(String name) {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                events.add("server:" + name + ":" + headers.get(TRACE));
                return next.startCall(call, headers);
            }
        };
    }

    /** Refuses calls without "Bearer good" with UNAUTHENTICATED, before anything else runs. */
    private static final ServerInterceptor BEARER_CHECK = new ServerInterceptor() {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                     ServerCallHandler<ReqT, RespT> next) {
            if (!"Bearer good".equals(headers.get(TOKEN))) {
                call.close(Status.UNAUTHENTICATED.withDescription("missing or bad bearer token"), new Metadata());
                return new ServerCall.Listener<>() {
                };
            }
            return next.startCall(call, headers);
        }
    };

    private static ClientInterceptor bearer(String token) {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions options, Channel next) {
                return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        headers.put(TOKEN, "Bearer " + token);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /** A hand-written stub of the test service's Echo, as generated stubs are made. */
    private static final class EchoStub extends AbstractStub<EchoStub> {
        EchoStub(Channel channel, CallOptions options) {
            super(channel, options);
        }

        @Override
        protected EchoStub build(Channel channel, CallOptions options) {
            return new EchoStub(channel, options);
        }

        byte[] echo(byte[] request) {
            return ClientCalls.blockingUnaryCall(getChannel(), TestService.ECHO, getCallOptions(), request);
        }
    }

    @Test
    void aClientInterceptorsHeaderReachesTheServerAndTheHandler() throws Exception {
        RpcServer s = server(b -> b.addService(ServerInterceptors.intercept(service.definition(), serverTracer("only"))));
        RpcChannel ch = channel(s);
        Channel intercepted = ClientInterceptors.intercept(ch, clientTracer("c1"));
        assertEquals(ch.authority(), intercepted.authority());
        // META echoes the x-ascii request header; the tracer's header reaches the server's interceptor
        Metadata.Key<String> ascii = TestService.ASCII_KEY;
        ClientInterceptor addAscii = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions options, Channel next) {
                return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        headers.put(ascii, "from-interceptor");
                        super.start(new SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(Metadata responseHeaders) {
                                events.add("response-header:" + responseHeaders.get(ascii));
                                super.onHeaders(responseHeaders);
                            }
                        }, headers);
                    }
                };
            }
        };
        byte[] answer = ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(intercepted, addAscii), TestService.META,
                CallOptions.DEFAULT, "hi".getBytes());
        assertArrayEquals("hi".getBytes(), answer);
        assertTrue(events.contains("server:only:c1"), events.toString());
        assertTrue(events.contains("response-header:hdr-from-interceptor"), "the handler read the header: " + events);
    }

    @Test
    void interceptorsRunInGrpcOrderOnBothSides() throws Exception {
        RpcServer s = server(b -> b
                .addService(ServerInterceptors.intercept(service.definition(), serverTracer("s1"), serverTracer("s2")))
                .intercept(serverTracer("g1"))
                .intercept(serverTracer("g2")));
        RpcChannel ch = channel(s);
        // intercept(ch, c1, c2) is intercept(intercept(ch, c1), c2): c2 runs first; the stub's own runs before both
        Channel intercepted = ClientInterceptors.intercept(ch, clientTracer("c1"), clientTracer("c2"));
        EchoStub stub = new EchoStub(intercepted, CallOptions.DEFAULT).withInterceptors(clientTracer("stub"));
        assertArrayEquals(new byte[] {1, 2}, stub.echo(new byte[] {1, 2}));
        String trace = "stub,c2,c1";
        assertEquals(List.of("intercept:stub", "intercept:c2", "intercept:c1",
                // the server's own interceptors run before the service's; the last added of each runs first
                "server:g2:" + trace, "server:g1:" + trace, "server:s2:" + trace, "server:s1:" + trace), events);
        assertEquals(1, service.calls.get());

        events.clear();
        Channel forward = ClientInterceptors.interceptForward(ch, clientTracer("f1"), clientTracer("f2"));
        assertArrayEquals(new byte[] {3}, ClientCalls.blockingUnaryCall(forward, TestService.ECHO, CallOptions.DEFAULT, new byte[] {3}));
        assertEquals(List.of("intercept:f1", "intercept:f2"), events.subList(0, 2));
        assertEquals("server:g2:f1,f2", events.get(2));
    }

    @Test
    void aServerInterceptorRefusesWithUnauthenticatedBeforeTheHandlerRuns() throws Exception {
        RpcServer s = server(b -> b.addService(service.definition()).intercept(BEARER_CHECK));
        RpcChannel ch = channel(s);
        StatusException e = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, new byte[] {1}));
        assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
        assertEquals("missing or bad bearer token", e.getStatus().getDescription());
        StatusException bad = assertThrows(StatusException.class, () -> new EchoStub(ch, CallOptions.DEFAULT)
                .withInterceptors(bearer("forged")).echo(new byte[] {1}));
        assertEquals(Status.Code.UNAUTHENTICATED, bad.getStatus().getCode());

        // a client-streaming call whose messages are on their way when it is refused
        CompletableFuture<byte[]> counted = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(
                ch.newCall(TestService.COUNT, CallOptions.DEFAULT), observe(counted));
        for (int i = 0; i < 20; i++) {
            requests.onNext(new byte[64 << 10]);
        }
        requests.onCompleted();
        Throwable refused = assertThrows(java.util.concurrent.ExecutionException.class, () -> counted.get(60, TimeUnit.SECONDS)).getCause();
        assertEquals(Status.Code.UNAUTHENTICATED, Status.fromThrowable(refused).getCode());
        assertEquals(0, service.calls.get(), "no handler ran");
        assertTrue(service.events.isEmpty(), "no handler ran: " + service.events);

        EchoStub authorized = new EchoStub(ch, CallOptions.DEFAULT).withInterceptors(bearer("good"));
        assertArrayEquals(new byte[] {7}, authorized.echo(new byte[] {7}));
        assertEquals(1, service.calls.get());
    }

    @Test
    void withMutualTlsAnInterceptorAdmitsOnlyTheRightClientCertificate() throws Exception {
        List<Principal> seen = new CopyOnWriteArrayList<>();
        ServerInterceptor onlyTestClient = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                // reached through another interceptor's forwarding call: the peer accessors must be forwarded
                assertNotNull(call.getSslSession(), "the TLS session through a forwarding call");
                Principal p = call.getConnection() == null ? null : call.getConnection().peerPrincipal();
                seen.add(p);
                if (p == null) {
                    call.close(Status.UNAUTHENTICATED.withDescription("a client certificate is required"), new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                }
                if (!p.getName().equals("CN=test-client")) {
                    call.close(Status.PERMISSION_DENIED.withDescription(p.getName() + " may not call "
                            + call.getMethodDescriptor().getFullMethodName()), new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                }
                return next.startCall(call, headers);
            }
        };
        ServerInterceptor wrapping = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                return next.startCall(new SimpleForwardingServerCall<>(call) {
                }, headers);
            }
        };
        RpcServer s = server(b -> b.addService(ServerInterceptors.intercept(service.definition(), onlyTestClient, wrapping))
                .tls(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.OPTIONAL).build()));

        RpcChannel right = channel(s, TlsFiles.client("client").build());
        assertArrayEquals(new byte[] {1}, ClientCalls.blockingUnaryCall(right, TestService.ECHO, CallOptions.DEFAULT, new byte[] {1}));
        assertEquals(1, service.calls.get());

        RpcChannel wrong = channel(s, TlsFiles.client("other-client").build());
        StatusException denied = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(wrong, TestService.ECHO, CallOptions.DEFAULT, new byte[] {1}));
        assertEquals(Status.Code.PERMISSION_DENIED, denied.getStatus().getCode());
        assertEquals("CN=other-client may not call test.TestService/Echo", denied.getStatus().getDescription());

        RpcChannel anonymous = channel(s, TlsFiles.client().build());
        StatusException unauthenticated = assertThrows(StatusException.class,
                () -> ClientCalls.blockingUnaryCall(anonymous, TestService.ECHO, CallOptions.DEFAULT, new byte[] {1}));
        assertEquals(Status.Code.UNAUTHENTICATED, unauthenticated.getStatus().getCode());
        assertEquals("a client certificate is required", unauthenticated.getStatus().getDescription());

        assertEquals(1, service.calls.get(), "the refused calls never reached the handler");
        assertEquals(3, seen.size());
        assertEquals("CN=test-client", seen.get(0).getName());
    }

    @Test
    void forwardingCallsAndListenersSeeEveryEventOfAStreamingCall() throws Exception {
        ServerInterceptor observing = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                ServerCall<ReqT, RespT> watched = new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void sendMessage(RespT message) {
                        events.add("server-send");
                        super.sendMessage(message);
                    }

                    @Override
                    public void close(Status status, Metadata trailers) {
                        events.add("server-close:" + status.getCode());
                        super.close(status, trailers);
                    }
                };
                return new SimpleForwardingServerCallListener<>(next.startCall(watched, headers)) {
                    @Override
                    public void onMessage(ReqT message) {
                        events.add("server-message");
                        super.onMessage(message);
                    }

                    @Override
                    public void onHalfClose() {
                        events.add("server-half-close");
                        super.onHalfClose();
                    }

                    @Override
                    public void onComplete() {
                        events.add("server-complete");
                        super.onComplete();
                    }
                };
            }
        };
        ClientInterceptor clientObserving = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions options, Channel next) {
                return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<RespT> listener, Metadata headers) {
                        super.start(new SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onMessage(RespT message) {
                                events.add("client-message");
                                super.onMessage(message);
                            }

                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                events.add("client-close:" + status.getCode());
                                super.onClose(status, trailers);
                            }
                        }, headers);
                    }

                    @Override
                    public void sendMessage(ReqT message) {
                        events.add("client-send");
                        super.sendMessage(message);
                    }

                    @Override
                    public void halfClose() {
                        events.add("client-half-close");
                        super.halfClose();
                    }
                };
            }
        };
        RpcServer s = server(b -> b.addService(service.definition()).intercept(observing));
        Channel ch = ClientInterceptors.intercept(channel(s), clientObserving);

        // bidi: three messages each way
        CompletableFuture<List<byte[]>> replies = new CompletableFuture<>();
        List<byte[]> got = new CopyOnWriteArrayList<>();
        StreamObserver<byte[]> chat = ClientCalls.asyncBidiStreamingCall(ch.newCall(TestService.CHAT, CallOptions.DEFAULT),
                new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        got.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        replies.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        replies.complete(got);
                    }
                });
        for (int i = 0; i < 3; i++) {
            chat.onNext(new byte[] {(byte) i});
        }
        chat.onCompleted();
        List<byte[]> answers = replies.get(60, TimeUnit.SECONDS);
        assertEquals(3, answers.size());
        assertArrayEquals(new byte[] {(byte) ~2}, answers.get(2));
        Await.until(() -> events.contains("server-complete"), () -> "the server's onComplete: " + events);
        assertEquals(3, count("client-send"));
        assertEquals(3, count("server-message"));
        assertEquals(3, count("server-send"));
        assertEquals(3, count("client-message"));
        assertEquals(1, count("client-half-close"));
        assertEquals(1, count("server-half-close"));
        assertEquals(1, count("server-close:OK"));
        assertEquals(1, count("client-close:OK"));
        assertTrue(events.indexOf("server-half-close") < events.indexOf("server-close:OK"), events.toString());

        // server streaming through the blocking iterator: 5 responses of 100 KiB
        events.clear();
        byte[] request = new byte[8];
        System.arraycopy(Bytes.ofInt(5), 0, request, 0, 4);
        System.arraycopy(Bytes.ofInt(100 << 10), 0, request, 4, 4);
        Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(ch, TestService.STREAM, CallOptions.DEFAULT, request);
        int n = 0;
        while (it.hasNext()) {
            assertArrayEquals(Bytes.pattern(100 << 10, n), it.next());
            n++;
        }
        assertEquals(5, n);
        assertEquals(5, count("client-message"));
        assertEquals(5, count("server-send"));
        Await.until(() -> events.contains("server-complete"), () -> "the server's onComplete: " + events);
    }

    @Test
    void anInterceptorThatThrowsFailsTheCallWithAClearStatusAndTheServerCarriesOn() throws Exception {
        Metadata.Key<String> failKey = Metadata.Key.ascii("x-fail");
        ServerInterceptor throwing = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                String how = headers.get(failKey);
                if ("throw".equals(how)) {
                    throw new IllegalStateException("the interceptor broke");
                }
                if ("status".equals(how)) {
                    throw Status.RESOURCE_EXHAUSTED.withDescription("quota used up").asException();
                }
                if ("null".equals(how)) {
                    return null;
                }
                return next.startCall(call, headers);
            }
        };
        RpcServer s = server(b -> b.addService(service.definition()).intercept(throwing));
        RpcChannel ch = channel(s);

        StatusException thrown = assertThrows(StatusException.class, () -> call(ch, failKey, "throw"));
        assertEquals(Status.Code.UNKNOWN, thrown.getStatus().getCode());
        assertEquals("the interceptor broke", thrown.getStatus().getDescription());
        StatusException status = assertThrows(StatusException.class, () -> call(ch, failKey, "status"));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, status.getStatus().getCode());
        assertEquals("quota used up", status.getStatus().getDescription());
        StatusException noListener = assertThrows(StatusException.class, () -> call(ch, failKey, "null"));
        assertEquals(Status.Code.UNKNOWN, noListener.getStatus().getCode());
        assertTrue(noListener.getStatus().getDescription().contains("returned no listener"), noListener.getStatus().toString());

        // a client-streaming call with messages queued when the interceptor throws: its buffers are freed
        Metadata fail = new Metadata();
        fail.put(failKey, "throw");
        CompletableFuture<byte[]> counted = new CompletableFuture<>();
        StreamObserver<byte[]> requests = ClientCalls.asyncClientStreamingCall(
                ch.newCall(TestService.COUNT, CallOptions.DEFAULT.withHeaders(fail)), observe(counted));
        for (int i = 0; i < 20; i++) {
            requests.onNext(new byte[64 << 10]);
        }
        requests.onCompleted();
        Throwable failed = assertThrows(java.util.concurrent.ExecutionException.class, () -> counted.get(60, TimeUnit.SECONDS)).getCause();
        assertEquals(Status.Code.UNKNOWN, Status.fromThrowable(failed).getCode());
        assertEquals(0, service.calls.get());

        assertArrayEquals(new byte[] {9}, call(ch, failKey, "no"), "the server still serves calls");
        assertEquals(1, service.calls.get());

        // on the client, an interceptor's exception reaches the caller and no call is made
        ClientInterceptor clientThrows = new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions options, Channel next) {
                throw new IllegalArgumentException("no calls today");
            }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new EchoStub(ch, CallOptions.DEFAULT).withInterceptors(clientThrows).echo(new byte[] {1}));
        assertEquals("no calls today", e.getMessage());
        assertEquals(1, service.calls.get());
    }

    @Test
    void interceptingWithNothingKeepsTheService() {
        var definition = service.definition();
        assertSame(definition, ServerInterceptors.intercept(definition));
    }

    private static byte[] call(Channel ch, Metadata.Key<String> key, String value) {
        Metadata headers = new Metadata();
        headers.put(key, value);
        return ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT.withHeaders(headers), new byte[] {9});
    }

    private int count(String event) {
        return (int) events.stream().filter(event::equals).count();
    }

    private static StreamObserver<byte[]> observe(CompletableFuture<byte[]> result) {
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                result.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                result.complete(null);
            }
        };
    }
}
