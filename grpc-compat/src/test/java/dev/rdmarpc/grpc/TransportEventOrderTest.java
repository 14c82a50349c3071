package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.internal.DisconnectError;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedClientTransport;
import io.grpc.internal.SharedResourceHolder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * grpc's transport listener hears transportShutdown before transportTerminated, even when the transport's last stream
 * closes while grpc is being told of the shutdown (as a retried attempt started on a transport whose connection has
 * just failed does): grpc's {@code InternalSubchannel} throws if termination comes first, and the call whose close
 * told it never completes. The listener here closes the last stream from inside transportShutdown, which is that
 * interleaving.
 */
class TransportEventOrderTest {
    private static final int BOUND_SECONDS = 60;

    @ParameterizedTest
    @ValueSource(strings = {"connection lost", "shutdown asked"})
    void terminationIsToldOnlyAfterShutdownWasTold(String how) throws Exception {
        ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
        // a peer that accepts and never answers HELLO: the connection fails when the test closes its socket
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort());
            ClientSettings settings = new ClientSettings(TransportMode.TCP, GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE,
                    GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE, 0, (int) TimeUnit.MINUTES.toMillis(10),
                    GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED, GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS, false);
            RdmaClientTransport transport = new RdmaClientTransport(address, "127.0.0.1:" + silent.getLocalPort(),
                    "test", Attributes.EMPTY, settings, new MethodCache(), timer);
            List<String> events = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<RdmaClientStream> lastStream = new AtomicReference<>();
            CompletableFuture<Void> terminated = new CompletableFuture<>();
            Runnable afterStart = transport.start(new ManagedClientTransport.Listener() {
                @Override
                public void transportShutdown(Status s, DisconnectError e) {
                    events.add("shutdown");
                    transport.streamClosed(lastStream.get(), true); // the last stream closes meanwhile
                    events.add("shutdown returned");
                }

                @Override
                public void transportTerminated() {
                    events.add("terminated");
                    terminated.complete(null);
                }

                @Override
                public void transportReady() {
                    events.add("ready");
                }

                @Override
                public void transportInUse(boolean inUse) {
                }
            });
            if (afterStart != null) {
                afterStart.run();
            }
            try (Socket peer = silent.accept()) {
                RdmaClientStream stream = (RdmaClientStream) transport.newStream(SemanticsTest.ECHO, new Metadata(),
                        CallOptions.DEFAULT, new ClientStreamTracer[0]);
                lastStream.set(stream);
                assertNull(transport.streamStarting(stream, true), "the transport took the stream");
                if (how.equals("shutdown asked")) {
                    transport.shutdown(Status.UNAVAILABLE.withDescription("the test shut it down"));
                }
            } // "connection lost": closing the peer's socket fails the connection
            terminated.get(BOUND_SECONDS, TimeUnit.SECONDS);
            assertEquals(List.of("shutdown", "shutdown returned", "terminated"), events);
        } finally {
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
        }
    }
}
