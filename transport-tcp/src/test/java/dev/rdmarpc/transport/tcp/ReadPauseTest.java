package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.TransportConfig;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that floods PINGs and never reads makes this side stop reading once the PING ACKs it owes pass the bound,
 * on server and client connections; other connections are served meanwhile, and once the peer reads it gets every
 * ACK in order and the connection carries on.
 */
@ExtendWith(LeakCheck.class)
class ReadPauseTest {
    /** PINGs a plaintext flood sends: Netty counts 96 bytes per buffer on top of each 24-byte ACK, so 36 MB. */
    private static final int PINGS = 300_000;
    /** PINGs a TLS flood sends: the ACKs are encrypted into large records (24 MB of them), so more are needed. */
    private static final int TLS_PINGS = 1_000_000;
    private static final int PING_FRAME = FrameHeader.SIZE + 8;
    /**
     * Slack past the bound: reads stop at the frame whose answer crosses it, but a read the socket had already
     * completed may still be handed over and buffered (not decoded).
     */
    private static final long ONE_READ = 256 * 1024;

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    /** Opens the flooding client's socket to the server. */
    private interface Dialler {
        Socket open(InetSocketAddress server) throws Exception;
    }

    /** A plain socket that reads little into its kernel buffer, so the server's answers back up soon. */
    private static Socket plain(InetSocketAddress server) throws IOException {
        Socket raw = new Socket();
        raw.setReceiveBufferSize(32 * 1024);
        raw.connect(server, 5_000);
        return raw;
    }

    /** The same socket under TLS (JDK provider), trusting the test CA and agreeing on ALPN rdmarpc/1. */
    private static Socket tls(InetSocketAddress server) throws Exception {
        KeyStore roots = KeyStore.getInstance(KeyStore.getDefaultType());
        roots.load(null, null);
        try (InputStream ca = Files.newInputStream(TlsTestFiles.path("ca.pem"))) {
            roots.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(ca));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(roots);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        SSLSocket ssl = (SSLSocket) context.getSocketFactory().createSocket(plain(server), "localhost", server.getPort(), true);
        SSLParameters params = ssl.getSSLParameters();
        params.setApplicationProtocols(new String[] {TlsConfig.ALPN_PROTOCOL});
        params.setEndpointIdentificationAlgorithm("HTTPS");
        ssl.setSSLParameters(params);
        ssl.startHandshake();
        return ssl;
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void serverStopsReadingAClientThatFloodsPingsWithoutReading(String io) throws Exception {
        serverFloodedByAClientThatDoesNotRead(TestTransports.config(io), TestTransports.config(io), ReadPauseTest::plain, PINGS);
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void serverStopsReadingATlsClientThatFloodsPingsWithoutReading(String io) throws Exception {
        TlsConfig serverTls = TlsConfig.forServer(TlsTestFiles.path("server.pem"), TlsTestFiles.path("server.key")).build();
        TlsConfig clientTls = TlsConfig.forClient().trustRoots(TlsTestFiles.path("ca.pem")).build();
        serverFloodedByAClientThatDoesNotRead(new TransportConfig(SlabPool.shared(), 0, io, serverTls, 30_000),
                new TransportConfig(SlabPool.shared(), 0, io, clientTls, 30_000), ReadPauseTest::tls, TLS_PINGS);
    }

    private static void serverFloodedByAClientThatDoesNotRead(TransportConfig serverConfig, TransportConfig clientConfig,
                                                              Dialler dialler, int pings) throws Exception {
        PingAnswerer.Factory serverHandlers = new PingAnswerer.Factory();
        TcpServerTransport server = new TcpServerTransport(serverConfig);
        TcpClientTransport client = new TcpClientTransport(clientConfig);
        InetSocketAddress bound = server.bind(TestTransports.ANY_LOOPBACK_PORT, serverHandlers);
        InetSocketAddress address = new InetSocketAddress("localhost", bound.getPort());
        try (Socket raw = dialler.open(address)) {
            CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> flood(raw, pings));
            PingAnswerer victim = serverHandlers.next();
            TcpFrameConnection c = (TcpFrameConnection) victim.connection;

            Await.until(c::readsPaused, () -> "the server paused reading; unsent " + c.unsentBytes() + ", pings " + victim.pings);
            // The socket may take some of it after the pause; reads stay off until it drains below the low mark.
            long unsent = c.unsentBytes();
            assertTrue(unsent <= TcpFrameConnection.READ_PAUSE_BOUND + ONE_READ, "unsent " + unsent);
            assertTrue(victim.pings.get() < pings, "the server read every PING before pausing");
            assertFalse(c.isWritable());

            // Another client is served while that connection is paused.
            FrameConnection good = client.connect(address, new PingAnswerer.Factory(), 30_000).get(60, TimeUnit.SECONDS);
            PingAnswerer goodServerSide = serverHandlers.next();
            good.send(TestFrames.hello());
            good.send(dev.rdmarpc.core.protocol.Frames.ping(TestFrames.POOL, 42, false));
            Await.until(() -> goodServerSide.pings.get() == 1, "the good client's PING reached the server");

            AtomicLong maxUnsent = new AtomicLong(unsent);
            readAcks(raw, pings, () -> maxUnsent.accumulateAndGet(c.unsentBytes(), Math::max));
            writing.get(60, TimeUnit.SECONDS);
            assertEquals(pings, victim.pings.get(), "PINGs the server answered");
            assertTrue(maxUnsent.get() <= TcpFrameConnection.READ_PAUSE_BOUND + ONE_READ, "unsent reached " + maxUnsent.get());
            Await.until(() -> !c.readsPaused() && c.unsentBytes() == 0 && c.isWritable(), "the connection drained and reads again");
            assertTrue(c.isOpen());
        } finally {
            client.close();
            server.close();
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void clientStopsReadingAServerThatFloodsPingsWithoutReading(String io) throws Exception {
        TcpClientTransport client = new TcpClientTransport(TestTransports.config(io));
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReceiveBufferSize(32 * 1024);
            listener.bind(TestTransports.ANY_LOOPBACK_PORT);
            PingAnswerer.Factory clientHandlers = new PingAnswerer.Factory();
            CompletableFuture<FrameConnection> connecting = client.connect(
                    (InetSocketAddress) listener.getLocalSocketAddress(), clientHandlers, 30_000);
            try (Socket raw = listener.accept()) {
                connecting.get(60, TimeUnit.SECONDS);
                PingAnswerer victim = clientHandlers.next();
                TcpFrameConnection c = (TcpFrameConnection) victim.connection;
                CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> flood(raw, PINGS));

                Await.until(c::readsPaused, () -> "the client paused reading; unsent " + c.unsentBytes() + ", pings " + victim.pings);
                long unsent = c.unsentBytes();
                assertTrue(unsent <= TcpFrameConnection.READ_PAUSE_BOUND + ONE_READ, "unsent " + unsent);
                assertTrue(victim.pings.get() < PINGS, "the client read every PING before pausing");

                readAcks(raw, PINGS, () -> { });
                writing.get(60, TimeUnit.SECONDS);
                assertEquals(PINGS, victim.pings.get(), "PINGs the client answered");
                Await.until(() -> !c.readsPaused() && c.unsentBytes() == 0, "the connection drained and reads again");
                assertTrue(c.isOpen());
            }
        } finally {
            client.close();
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void aClientSendingFarMoreThanTheBoundToAnEchoingServerIsNotStuck(String io) throws Exception {
        // The server pauses while the echoes back up; the client, sending on its own account, keeps reading them,
        // so neither waits for the other for good.
        int frames = 40;
        int size = FrameHeader.DEFAULT_MAX_PAYLOAD;
        try (EchoLoop loop = new EchoLoop(io)) {
            RecordingHandler client = loop.connect();
            FrameConnection c = client.connection;
            c.send(TestFrames.hello());
            for (int i = 0; i < frames; i++) {
                c.send(TestFrames.message(1, TestFrames.pattern(9, i, size)), null, i % 4 == 3);
            }
            c.flush();
            assertEquals(FrameType.HELLO, client.nextFrame().type());
            for (int i = 0; i < frames; i++) {
                TestFrames.Frame f = client.nextFrame();
                assertEquals(i, TestFrames.seq(f.payload()), "echo " + i);
                assertEquals(size, f.payload().length);
            }
            assertFalse(((TcpFrameConnection) c).readsPaused());
        }
    }

    /** Writes a HELLO and then {@code pings} PINGs numbered from 0, never reading. */
    private static void flood(Socket raw, int pings) {
        try {
            OutputStream out = raw.getOutputStream();
            out.write(TestFrames.helloWire());
            int batch = 1000;
            ByteBuffer b = ByteBuffer.allocate(batch * PING_FRAME).order(ByteOrder.LITTLE_ENDIAN);
            for (int seq = 0; seq < pings; ) {
                b.clear();
                for (int i = 0; i < batch && seq < pings; i++, seq++) {
                    b.putInt(8).put((byte) FrameType.PING).put((byte) 0).putShort((short) 0).putInt(0).putInt(0).putLong(seq);
                }
                out.write(b.array(), 0, b.position());
            }
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException("writing PINGs failed", e);
        }
    }

    /** Reads the peer's answers: one ACK per PING, numbered in order; {@code onChunk} runs as it goes. */
    private static void readAcks(Socket raw, int pings, Runnable onChunk) throws IOException {
        raw.setSoTimeout((int) Await.DEFAULT_BOUND.toMillis());
        DataInputStream in = new DataInputStream(new BufferedInputStream(raw.getInputStream(), 64 * 1024));
        byte[] frame = new byte[PING_FRAME];
        ByteBuffer f = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        for (long expected = 0; expected < pings; expected++) {
            in.readFully(frame);
            assertEquals(8, f.getInt(0), "payload length of ACK " + expected);
            assertEquals(FrameType.PING, frame[4], "type of ACK " + expected);
            assertEquals(FrameFlags.ACK, frame[5], "flags of ACK " + expected);
            assertEquals(expected, f.getLong(FrameHeader.SIZE), "ACKs out of order");
            if (expected % 10_000 == 0) {
                onChunk.run();
            }
        }
    }
}
