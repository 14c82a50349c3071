package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.ServerTransport;
import dev.rdmarpc.core.spi.TransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Binding, connecting, refusing and closing: what callers see and what is left behind. */
@ExtendWith(LeakCheck.class)
class TransportLifecycleTest {

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    @Test
    void providerIsFoundWithServiceLoader() {
        TransportProvider tcp = ServiceLoader.load(TransportProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals("tcp"))
                .findFirst().orElseThrow();
        assertInstanceOf(TcpTransportProvider.class, tcp);
        try (ClientTransport c = tcp.newClientTransport(TestTransports.config("auto"));
             ServerTransport s = tcp.newServerTransport(TestTransports.config("auto"))) {
            assertInstanceOf(TcpClientTransport.class, c);
            assertInstanceOf(TcpServerTransport.class, s);
        }
    }

    @Test
    void nativeIoSettings() {
        IoFlavor auto = IoFlavor.select("auto");
        assertTrue(auto.isAvailable());
        assertEquals(IoFlavor.NIO, IoFlavor.select("nio"));
        assertEquals(IoFlavor.NIO, IoFlavor.select("NIO"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IoFlavor.select("kqueue"));
        assertTrue(e.getMessage().contains("kqueue"), e.getMessage());
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void bindToPortZeroReturnsTheRealPort(String io) throws Exception {
        try (TcpServerTransport server = new TcpServerTransport(TestTransports.config(io))) {
            InetSocketAddress bound = server.bind(TestTransports.ANY_LOOPBACK_PORT, new RecordingHandler.Factory(true));
            assertNotEquals(0, bound.getPort());
            assertEquals(InetAddress.getLoopbackAddress(), bound.getAddress());
            assertEquals(io.equals("auto") ? IoFlavor.select("auto").configName() : io, server.ioName());
            assertThrows(IllegalStateException.class, () -> server.bind(TestTransports.ANY_LOOPBACK_PORT, new RecordingHandler.Factory(true)));
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void portInUseFailsNamingThePortAndLeavesNoThread(String io) throws Exception {
        Set<Thread> threadsBefore = TestTransports.ioThreads();
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             TcpServerTransport server = new TcpServerTransport(TestTransports.config(io))) {
            int port = taken.getLocalPort();
            IOException e = assertThrows(IOException.class,
                    () -> server.bind(new InetSocketAddress("127.0.0.1", port), new RecordingHandler.Factory(true)));
            assertEquals("cannot listen on 127.0.0.1:" + port + ": port " + port + " is already in use", e.getMessage());
            TestTransports.awaitNoIoThreadsBut(threadsBefore, "a failed bind left I/O threads running");
            // the transport is still usable on another port
            assertNotEquals(0, server.bind(TestTransports.ANY_LOOPBACK_PORT, new RecordingHandler.Factory(true)).getPort());
        }
        TestTransports.awaitNoIoThreadsBut(threadsBefore, "close left I/O threads running");
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void connectToAClosedPortFailsWithConnectException(String io) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (TcpClientTransport client = new TcpClientTransport(TestTransports.config(io))) {
            RecordingHandler.Factory handlers = new RecordingHandler.Factory(false);
            CompletableFuture<FrameConnection> f = client.connect(new InetSocketAddress("127.0.0.1", port), handlers, 5_000);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
            assertInstanceOf(ConnectException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("Connection refused"), e.getCause().getMessage());
            // epoll and NIO name the address in the message, io_uring does not: core names it itself
            assertTrue(handlers.created.isEmpty());
        }
    }

    @Test
    void failingHandlerFactoryFailsTheConnect() throws Exception {
        try (EchoLoop loop = new EchoLoop("auto")) {
            IllegalStateException boom = new IllegalStateException("no handler for you");
            CompletableFuture<FrameConnection> f = loop.client.connect(loop.address, c -> {
                throw boom;
            }, 5_000);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
            assertSame(boom, e.getCause());
        }
    }

    @Test
    void stopAcceptingRefusesNewConnectionsAndKeepsOpenOnes() throws Exception {
        try (EchoLoop loop = new EchoLoop("auto")) {
            RecordingHandler open = loop.connect();
            // The client's connect completes once the kernel has the connection, which may still wait in the
            // listener's backlog: closing the listener resets those. Open means accepted, its server handler made.
            loop.serverHandlers.next();
            loop.server.stopAccepting();
            CompletableFuture<FrameConnection> f = loop.client.connect(loop.address, new RecordingHandler.Factory(false), 5_000);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
            assertInstanceOf(ConnectException.class, e.getCause());
            open.connection.send(TestFrames.hello());
            assertEquals(FrameType.HELLO, open.nextFrame().type());
            assertTrue(open.connection.isOpen());
        }
    }

    @Test
    void closingTheServerClosesItsConnectionsAndStopsItsThreads() throws Exception {
        Set<Thread> threadsBefore = TestTransports.ioThreads();
        try (EchoLoop loop = new EchoLoop("auto")) {
            RecordingHandler client = loop.connect();
            client.connection.send(TestFrames.hello());
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            RecordingHandler server = loop.serverHandlers.next();
            assertEquals(1, loop.server.openConnections());
            loop.server.close();
            server.awaitClosed();
            assertEquals("server transport closed", server.closedReason);
            client.awaitClosed();
            assertEquals(TcpFrameConnection.PEER_CLOSED, client.closedReason);
            assertFalse(client.connection.isOpen());
            assertEquals(0, loop.server.openConnections());
            loop.server.close(); // twice is fine
            loop.client.close();
            CompletableFuture<FrameConnection> late = loop.client.connect(loop.address, new RecordingHandler.Factory(false), 1_000);
            assertInstanceOf(IllegalStateException.class, assertThrows(ExecutionException.class, late::get).getCause());
        }
        TestTransports.awaitNoIoThreadsBut(threadsBefore, "closing left I/O threads running");
    }

    @Test
    void closingTheClientClosesItsConnections() throws Exception {
        try (EchoLoop loop = new EchoLoop("auto")) {
            RecordingHandler a = loop.connect();
            RecordingHandler b = loop.connect();
            a.connection.send(TestFrames.hello());
            assertEquals(FrameType.HELLO, a.nextFrame().type());
            loop.client.close();
            a.awaitClosed();
            b.awaitClosed();
            assertEquals("client transport closed", a.closedReason);
            assertEquals("client transport closed", b.closedReason);
            RecordingHandler serverA = loop.serverHandlers.next();
            serverA.awaitClosed();
            assertEquals(TcpFrameConnection.PEER_CLOSED, serverA.closedReason);
        }
    }

    @Test
    void connectionFacts() throws Exception {
        try (EchoLoop loop = new EchoLoop("auto")) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            RecordingHandler server = loop.serverHandlers.next();
            assertEquals(c.localAddress(), server.connection.remoteAddress());
            assertEquals(c.remoteAddress(), server.connection.localAddress());
            assertEquals(TcpFrameConnection.PREFERRED_CHUNK_SIZE, c.preferredChunkSize());
            assertTrue(c.isWritable());
            assertThrows(IllegalArgumentException.class, () -> c.setMaxInboundPayload(-1));
            assertThrows(NullPointerException.class, () -> c.send(null, TestFrames.hello(), true));
            c.send(TestFrames.hello(), null, true);
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            assertFalse(c.inIoThread());
            server.connection.send(TestFrames.frame(FrameType.PING, 0, 0, 0, new byte[8]));
            TestFrames.Frame ping = client.nextFrame();
            assertEquals(FrameType.PING, ping.type());
            c.close("bye");
            client.awaitClosed();
            assertFalse(c.isOpen());
            // A close of a closed connection is refused on the spot (the first reason wins) and queues nothing, so
            // there is no later event to wait for: no second onClosed now is all there is to check.
            c.close("again");
            assertEquals(1, client.closedCalls.get());
            assertEquals("bye", client.closedReason);
        }
    }
}
