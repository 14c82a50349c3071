package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedChannelImplBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * An {@code WireProtocol.AUTO} channel that finds a stock grpc-netty server hands its connection to grpc-netty's
 * transport before grpc starts a call on it: calls waiting for the connection all succeed on grpc-netty's transport,
 * the connection rdmarpc opened is closed, and the channel's next connection to that address is grpc-netty's from the
 * start.
 */
@ExtendWith(SlabLeakCheck.class)
class AutoHandoffTest {
    private static final long BOUND_SECONDS = 60 * Math.max(1, (long) Double.parseDouble(
            System.getProperty("rdmarpc.test.timeoutScale", "1")));
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<CountingProxy> proxies = new ArrayList<>();

    /** A TCP proxy in front of the stock server that counts the connections the channel opens and those still open. */
    private static final class CountingProxy implements AutoCloseable {
        private final ServerSocket listener;
        private final int targetPort;
        private int accepted;
        private int open;

        CountingProxy(int targetPort) throws IOException {
            this.targetPort = targetPort;
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().name("counting-proxy").start(this::acceptLoop);
        }

        int port() {
            return listener.getLocalPort();
        }

        private void acceptLoop() {
            while (!listener.isClosed()) {
                try {
                    Socket client = listener.accept();
                    Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    changed(1, 1);
                    AtomicBoolean ended = new AtomicBoolean();
                    Runnable end = () -> {
                        if (ended.compareAndSet(false, true)) {
                            closeQuietly(client);
                            closeQuietly(server);
                            changed(0, -1);
                        }
                    };
                    Thread.ofVirtual().start(() -> pump(client, server, end));
                    Thread.ofVirtual().start(() -> pump(server, client, end));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private static void pump(Socket from, Socket to, Runnable end) {
            try {
                from.getInputStream().transferTo(to.getOutputStream());
            } catch (IOException e) {
                // the other direction or close() ended it
            }
            end.run();
        }

        private synchronized void changed(int acceptedDelta, int openDelta) {
            accepted += acceptedDelta;
            open += openDelta;
            notifyAll();
        }

        synchronized int accepted() {
            return accepted;
        }

        /** Waits until exactly {@code n} connections are open (a bound only against a hang). */
        synchronized void awaitOpen(int n) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
            while (open != n) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    fail(open + " connections are open, not " + n);
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        private static void closeQuietly(java.io.Closeable c) {
            try {
                c.close();
            } catch (IOException e) {
                // closing anyway
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }

    @AfterEach
    void close() throws InterruptedException, IOException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(BOUND_SECONDS, TimeUnit.SECONDS);
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(BOUND_SECONDS, TimeUnit.SECONDS);
        }
        for (CountingProxy p : proxies) {
            p.close();
        }
    }

    /** A stock server whose echo answers at once and whose Hang never answers. */
    private Server stockServer() throws Exception {
        ServerServiceDefinition echo = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(HANG, ServerCalls.asyncUnaryCall((req, obs) -> { }))
                .build();
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(echo).build().start();
        servers.add(s);
        return s;
    }

    private static final MethodDescriptor<String, String> HANG = SemanticsTest.ECHO.toBuilder()
            .setFullMethodName("test.Semantics/Hang").build();

    private static CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(BOUND_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void callsWaitingForTheConnectionAllSucceedOnGrpcNettysTransport() throws Exception {
        CountingProxy proxy = new CountingProxy(stockServer().getPort());
        proxies.add(proxy);
        Queue<Attributes> seen = new ConcurrentLinkedQueue<>();
        ManagedChannel channel = RdmaChannelBuilder.forAddress("127.0.0.1", proxy.port())
                .intercept(new CallAttributesRecorder(seen::add)).build();
        channels.add(channel);

        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < 32; i++) { // all started before the channel has a connection
            calls.add(ClientCalls.futureUnaryCall(channel.newCall(SemanticsTest.ECHO, options()), "call-" + i));
        }
        for (int i = 0; i < calls.size(); i++) {
            assertEquals("call-" + i, calls.get(i).get(BOUND_SECONDS, TimeUnit.SECONDS));
        }
        assertEquals(32, seen.size());
        for (Attributes a : seen) {
            assertNull(a.get(RdmaAttributes.TRANSPORT), "carried by grpc-netty's transport, not rdmarpc's: " + a);
            assertNotNull(a.get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        }
        // rdmarpc's HELLO (answered with SETTINGS), its reconnection over HTTP/2 (handed off) and grpc-netty's: only
        // grpc-netty's stays open
        proxy.awaitOpen(1);
        assertEquals(3, proxy.accepted());

        channel.enterIdle(); // ends the transport: the next call needs a new connection
        assertEquals("again", ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, options(), "again"));
        assertEquals(4, proxy.accepted(), "the remembered address gets grpc-netty's connection straight away");
    }

    @Test
    void withoutGrpcNettyTheBridgeCarriesTheCallsAndTheAddressIsRemembered() throws Exception {
        CountingProxy proxy = new CountingProxy(stockServer().getPort());
        proxies.add(proxy);
        Queue<Attributes> seen = new ConcurrentLinkedQueue<>();
        ClientSettings settings = new ClientSettings(TransportMode.AUTO, GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE,
                GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE, 0, 20_000, GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED,
                GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS, false);
        // the factory as RdmaChannelBuilder makes it when grpc-netty is not on the class path
        ManagedChannelImplBuilder b = new ManagedChannelImplBuilder("127.0.0.1:" + proxy.port(),
                () -> new RdmaClientTransportFactory(settings, null), () -> GrpcUtil.DEFAULT_PORT_PLAINTEXT);
        b.proxyDetector(GrpcUtil.NOOP_PROXY_DETECTOR);
        ManagedChannel channel = b.intercept(new CallAttributesRecorder(seen::add)).build();
        channels.add(channel);

        assertEquals("first", ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, options(), "first"));
        assertEquals("h2", seen.poll().get(RdmaAttributes.TRANSPORT));
        proxy.awaitOpen(1); // HELLO answered with SETTINGS, then the bridge's HTTP/2 connection, which stays
        assertEquals(2, proxy.accepted());

        channel.enterIdle(); // ends the transport: the next call needs a new connection
        assertEquals("again", ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, options(), "again"));
        assertEquals("h2", seen.poll().get(RdmaAttributes.TRANSPORT));
        assertEquals(3, proxy.accepted(), "the remembered address is dialled with HTTP/2 straight away");
    }

    @Test
    void aChannelShutDownWhileItsFirstConnectionIsMadeTerminates() throws Exception {
        Server server = stockServer();
        ManagedChannel channel = RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort()).build();
        channels.add(channel);
        Future<String> call = ClientCalls.futureUnaryCall(channel.newCall(HANG, options()), "x"); // never answered
        channel.shutdownNow();
        assertTrue(channel.awaitTermination(BOUND_SECONDS, TimeUnit.SECONDS));
        try {
            call.get(BOUND_SECONDS, TimeUnit.SECONDS);
            fail("the call ended with the channel");
        } catch (ExecutionException e) {
            Status.Code code = ((StatusRuntimeException) e.getCause()).getStatus().getCode();
            assertTrue(code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED, "ended with " + code);
        }
    }
}
