package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Hello;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way a TLS connection can go wrong, over real sockets with both TLS providers: each fails that connection
 * only, with an error naming the reason on the side that can act, while a good client is still served and every
 * slab comes back.
 */
class TlsBadInputTest {
    private final List<Object> toClose = new ArrayList<>();
    private long baseline;

    @BeforeEach
    void baseline() {
        baseline = SlabPool.shared().inUseBuffers();
    }

    @AfterEach
    void closeAndCheckForLeaks() throws InterruptedException {
        for (Object c : toClose.reversed()) {
            if (c instanceof RpcChannel ch) {
                ch.shutdownNow();
                ch.awaitTermination(5, TimeUnit.SECONDS);
            } else if (c instanceof RpcServer s) {
                s.shutdownNow();
                s.awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        System.clearProperty("rdmarpc.tls.provider");
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private RpcServer server(String provider, TlsConfig tls) throws IOException {
        return server(provider, tls, Duration.ofSeconds(20));
    }

    private RpcServer server(String provider, TlsConfig tls, Duration handshakeTimeout) throws IOException {
        System.setProperty("rdmarpc.tls.provider", provider);
        RpcServer.Builder b = RpcServer.forPort(0).addService(new TestService().definition()).handshakeTimeout(handshakeTimeout);
        RpcServer s = (tls == null ? b : b.tls(tls)).build().start();
        toClose.add(s);
        return s;
    }

    private RpcChannel channel(RpcServer s, TlsConfig tls) {
        RpcChannel.Builder b = RpcChannel.forAddress("127.0.0.1", s.getPort());
        RpcChannel ch = (tls == null ? b : b.tls(tls)).build();
        toClose.add(ch);
        return ch;
    }

    private static byte[] echo(RpcChannel ch, byte[] request) {
        return ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, request);
    }

    /** The call fails with UNAVAILABLE whose description contains every one of {@code words}. */
    private static void assertUnavailableNaming(RpcChannel ch, String... words) {
        StatusException e = assertThrows(StatusException.class, () -> echo(ch, new byte[]{1}));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        String d = e.getStatus().getDescription();
        for (String w : words) {
            assertTrue(d.contains(w), "'" + w + "' in: " + d);
        }
    }

    /** A good client on the same server is served: the bad connection was the only one affected. */
    private void assertAGoodClientIsServed(RpcServer s, TlsConfig tls) {
        byte[] ok = Bytes.pattern(100, 3);
        assertArrayEquals(ok, echo(channel(s, tls), ok));
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aPlaintextClientOfATlsServerIsToldItNeedsTls(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("server").build());
        assertUnavailableNaming(channel(s, null), "127.0.0.1:" + s.getPort(), "requires a TLS connection");
        assertAGoodClientIsServed(s, TlsFiles.client().build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aTlsClientOfAPlaintextServerFailsClearly(String provider) throws IOException {
        RpcServer s = server(provider, null);
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "TLS handshake", "without answering the TLS ClientHello");
        assertAGoodClientIsServed(s, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void anExpiredServerCertificateIsNamed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("expired-server").build());
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "TLS handshake", "certificate has expired");
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void anUntrustedServerCertificateIsNamed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("untrusted-server").build());
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "TLS handshake", "not trusted");
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aCertificateForAnotherHostIsNamed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("wrong-host-server").build());
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "TLS handshake", "hostname verification");
        assertAGoodClientIsServed(s, TlsFiles.client().hostnameVerification(false).build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aCertificateNamingTheRightIssuerButSignedByAnotherKeyIsNamed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("forged-server").build());
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "TLS handshake", "signed by another key");
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aClientWithoutACertificateWhereOneIsRequiredIsToldSo(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.REQUIRE).build());
        assertUnavailableNaming(channel(s, TlsFiles.client().build()), "requires a client certificate");
        assertAGoodClientIsServed(s, TlsFiles.client("client").build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aClientCertificateTheServerDoesNotTrustIsRefused(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.REQUIRE).build());
        // The server's certificate request lists the CAs it trusts; a client whose certificate none of them issued
        // sends none, and hears that the server requires one it trusts.
        assertUnavailableNaming(channel(s, TlsFiles.client("untrusted-client").build()), "requires a client certificate it trusts");
        assertAGoodClientIsServed(s, TlsFiles.client("client").build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aStalledHandshakeIsClosedByTheHandshakeTimeoutWhileOthersAreServed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("server").build(), Duration.ofSeconds(3));
        try (Socket silent = connect(s); Socket half = connect(s)) {
            // half a ClientHello: a handshake record header announcing 512 bytes, and only 5 of them
            half.getOutputStream().write(new byte[]{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc});
            half.getOutputStream().flush();
            assertAGoodClientIsServed(s, TlsFiles.client().build());
            assertEquals(0, readUntilClosed(silent).length, "the silent socket was closed without an answer");
            readUntilClosed(half);
        }
        assertAGoodClientIsServed(s, TlsFiles.client().build());
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void aPlaintextHelloToATlsServerIsAnsweredWithATlsAlertAndClosed(String provider) throws IOException {
        RpcServer s = server(provider, TlsFiles.server("server").build());
        try (Socket raw = connect(s)) {
            raw.getOutputStream().write(plaintextHello());
            raw.getOutputStream().flush();
            byte[] answer = readUntilClosed(raw);
            assertArrayEquals(new byte[]{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a}, answer, "a fatal TLS alert in clear, then the close");
        }
        try (Socket raw = connect(s)) {
            raw.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            raw.getOutputStream().flush();
            assertEquals(7, readUntilClosed(raw).length, "a plaintext HTTP/2 client gets the alert too");
        }
        assertAGoodClientIsServed(s, TlsFiles.client().build());
    }

    private static Socket connect(RpcServer s) throws IOException {
        Socket sock = new Socket();
        sock.connect(new InetSocketAddress("127.0.0.1", s.getPort()), 10_000);
        sock.setSoTimeout(60_000); // only ends a hung test: the server closes long before
        return sock;
    }

    /** Everything the server sends until it closes the connection. */
    private static byte[] readUntilClosed(Socket sock) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        InputStream in = sock.getInputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            fail("the server did not close the connection");
        } catch (IOException e) {
            // reset: closed as well
        }
        return got.toByteArray();
    }

    private static byte[] plaintextHello() {
        ByteBuffer p = ByteBuffer.allocate(22).order(ByteOrder.LITTLE_ENDIAN);
        p.putInt(Hello.MAGIC).putShort((short) 1).putShort((short) 0).putInt(1 << 20).putInt(1 << 20).putInt(4 << 20).putShort((short) 0);
        ByteBuffer f = ByteBuffer.allocate(FrameHeader.SIZE + 22).order(ByteOrder.LITTLE_ENDIAN);
        f.putInt(22).put((byte) FrameType.HELLO).put((byte) 0).putShort((short) 0).putInt(0).putInt(0).put(p.array());
        return f.array();
    }
}
