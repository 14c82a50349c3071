package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ChannelLogger;
import io.grpc.ClientStreamTracer;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientTransportFactory.ClientTransportOptions;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.DisconnectError;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedClientTransport;
import io.grpc.internal.SharedResourceHolder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hand-off to grpc-netty's transport when grpc-netty's transport is ready before its {@code start()} returns (it
 * connects on its event loop, which can finish the HTTP/2 handshake and tell grpc while the thread that started it
 * has not yet returned): the streams grpc then starts go to grpc-netty's transport, not to the first connection that
 * is being closed. The test holds grpc-netty's {@code start()} until grpc has heard "ready", which is that interleaving.
 */
class HandoffRaceTest {
    private static final int BOUND_SECONDS = 30;
    private Server server;
    private ManagedClientTransport handoff;

    @AfterEach
    void close() throws InterruptedException {
        if (handoff != null) {
            handoff.shutdownNow(Status.UNAVAILABLE.withDescription("the test ended"));
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(BOUND_SECONDS, TimeUnit.SECONDS);
        }
    }

    @Test
    void streamsStartedWhenGrpcNettysTransportIsReadyGoToIt() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerServiceDefinition.builder("test.Semantics")
                        .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                            obs.onNext(req);
                            obs.onCompleted();
                        }))
                        .build())
                .build().start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.getPort());
        ClientSettings settings = new ClientSettings(TransportMode.AUTO, GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE,
                GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE, 0, 20_000, GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED,
                GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS, false);
        ClientTransportOptions options = new ClientTransportOptions().setAuthority(address.getHostString() + ":"
                + address.getPort());
        Http2Transports http2 = new Http2Transports(settings, InsecureChannelCredentials.create());
        RdmaClientTransport first = new RdmaClientTransport(address, options.getAuthority(), "test", Attributes.EMPTY,
                settings, new MethodCache(), SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE));
        CompletableFuture<ClientStream> startedWhenReady = new CompletableFuture<>();
        HandoffClientTransport transport = new HandoffClientTransport(first,
                () -> new ReadyBeforeStartReturns(http2.newTransport(address, options, new QuietLogger())), () -> { });
        handoff = transport;
        Runnable afterStart = transport.start(new ManagedClientTransport.Listener() {
            @Override
            public void transportReady() {
                // as grpc does for the calls waiting for this transport
                startedWhenReady.complete(transport.newStream(SemanticsTest.ECHO, new Metadata(), CallOptions.DEFAULT,
                        new ClientStreamTracer[0]));
            }

            @Override
            public void transportShutdown(Status s, DisconnectError e) {
            }

            @Override
            public void transportTerminated() {
            }

            @Override
            public void transportInUse(boolean inUse) {
            }
        });
        if (afterStart != null) {
            afterStart.run();
        }
        ClientStream stream = startedWhenReady.get(BOUND_SECONDS, TimeUnit.SECONDS);
        assertFalse(stream instanceof RdmaClientStream,
                "the stream went to the first connection, which the hand-off closes: " + stream);
        assertTrue(stream.getClass().getName().startsWith("io.grpc.netty."), stream.getClass().getName());
        http2.close();
    }

    /** grpc-netty's transport whose {@code start()} returns only once its listener has heard "ready". */
    private static final class ReadyBeforeStartReturns implements ConnectionClientTransport {
        private final ConnectionClientTransport delegate;

        ReadyBeforeStartReturns(ConnectionClientTransport delegate) {
            this.delegate = delegate;
        }

        @Override
        public void shutdown(Status reason) {
            delegate.shutdown(reason);
        }

        @Override
        public void shutdownNow(Status reason) {
            delegate.shutdownNow(reason);
        }

        @Override
        public ClientStream newStream(io.grpc.MethodDescriptor<?, ?> method, Metadata headers, CallOptions callOptions,
                                      ClientStreamTracer[] tracers) {
            return delegate.newStream(method, headers, callOptions, tracers);
        }

        @Override
        public void ping(PingCallback callback, java.util.concurrent.Executor executor) {
            delegate.ping(callback, executor);
        }

        @Override
        public Attributes getAttributes() {
            return delegate.getAttributes();
        }

        @Override
        public com.google.common.util.concurrent.ListenableFuture<io.grpc.InternalChannelz.SocketStats> getStats() {
            return delegate.getStats();
        }

        @Override
        public io.grpc.InternalLogId getLogId() {
            return delegate.getLogId();
        }

        @Override
        public Runnable start(Listener listener) {
            CountDownLatch ready = new CountDownLatch(1);
            Runnable r = delegate.start(new Listener() {
                @Override
                public void transportReady() {
                    listener.transportReady();
                    ready.countDown();
                }

                @Override
                public void transportShutdown(Status s, DisconnectError e) {
                    listener.transportShutdown(s, e);
                    ready.countDown();
                }

                @Override
                public void transportTerminated() {
                    listener.transportTerminated();
                }

                @Override
                public void transportInUse(boolean inUse) {
                    listener.transportInUse(inUse);
                }

                @Override
                public Attributes filterTransport(Attributes attributes) {
                    return listener.filterTransport(attributes);
                }
            });
            try {
                if (!ready.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                    throw new AssertionError("grpc-netty's transport was not ready within " + BOUND_SECONDS + " s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            return r;
        }
    }

    private static final class QuietLogger extends ChannelLogger {
        @Override
        public void log(ChannelLogLevel level, String message) {
        }

        @Override
        public void log(ChannelLogLevel level, String messageFormat, Object... args) {
        }
    }
}
