package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.Principal;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLSession;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Calls over TLS and mutual TLS on loopback: real handshakes, the client's verified identity on the server, the
 * RDMA upgrade left out under TLS unless allowed, and certificates renewed without a restart.
 */
class TlsTest {
    /** Answers with the subject of the client certificate the call arrived with, or "" without one. */
    private static final MethodDescriptor<byte[], byte[]> WHO_AM_I = MethodDescriptor.create("test.Tls/WhoAmI",
            MethodDescriptor.MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);

    private final BlockingQueue<PeerConnection> opened = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> toClose = new java.util.ArrayList<>();
    private long baseline;

    @BeforeEach
    void baseline() {
        baseline = SlabPool.shared().inUseBuffers();
        RecordingUpgrader.PREPARED.clear();
        RecordingUpgrader.enabled = true;
    }

    @AfterEach
    void closeAndCheckForLeaks() throws Exception {
        RecordingUpgrader.enabled = false;
        for (AutoCloseable c : toClose.reversed()) {
            if (c instanceof RpcChannel ch) {
                ch.shutdownNow();
                ch.awaitTermination(5, TimeUnit.SECONDS);
            } else if (c instanceof RpcServer s) {
                s.shutdownNow();
                s.awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private static ServiceDefinition whoAmI() {
        return ServiceDefinition.builder("test.Tls").addMethod(WHO_AM_I, (ServerCall<byte[], byte[]> call, Metadata headers) -> {
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onHalfClose() {
                    SSLSession session = call.getSslSession();
                    Principal p = call.getConnection().peerPrincipal();
                    String answer = session == null ? "plaintext" : p == null ? "" : p.getName();
                    call.sendHeaders(new Metadata());
                    call.sendMessage(answer.getBytes(StandardCharsets.UTF_8));
                    call.close(Status.OK, new Metadata());
                }
            };
        }).build();
    }

    private RpcServer server(TlsConfig tls, RdmaUnderTls underTls) throws IOException {
        RpcServer s = RpcServer.forPort(0).addService(whoAmI()).addService(new TestService().definition())
                .tls(tls).rdmaUnderTls(underTls)
                .connectionListener(new PeerConnectionListener() {
                    @Override
                    public void connectionOpened(PeerConnection connection) {
                        opened.add(connection);
                    }
                }).build().start();
        toClose.add(s);
        return s;
    }

    private RpcChannel channel(RpcServer s, TlsConfig tls) {
        return channel(s, tls, RdmaUnderTls.NEVER);
    }

    private RpcChannel channel(RpcServer s, TlsConfig tls, RdmaUnderTls underTls) {
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", s.getPort()).tls(tls).rdmaUnderTls(underTls).build();
        toClose.add(ch);
        return ch;
    }

    private static String whoAmI(RpcChannel ch) {
        return new String(ClientCalls.blockingUnaryCall(ch, WHO_AM_I, CallOptions.DEFAULT, new byte[0]), StandardCharsets.UTF_8);
    }

    private PeerConnection awaitOpened() throws InterruptedException {
        PeerConnection c = opened.poll(20, TimeUnit.SECONDS);
        assertNotNull(c, "the server saw the connection");
        return c;
    }

    @Test
    void callsTravelOverTlsAndTheServerSeesTheSession() throws Exception {
        RpcServer s = server(TlsFiles.server("server").build(), RdmaUnderTls.NEVER);
        RpcChannel ch = channel(s, TlsFiles.client().build());
        byte[] big = Bytes.pattern(3 << 20, 7);
        assertArrayEquals(big, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, big),
                "a message larger than a TLS record and a frame");
        assertEquals("", whoAmI(ch), "no client certificate was asked for");
        PeerConnection c = awaitOpened();
        assertNotNull(c.sslSession());
        assertTrue(List.of("TLSv1.3", "TLSv1.2").contains(c.sslSession().getProtocol()), c.sslSession().getProtocol());
        assertEquals(0, c.peerCertificates().length);
        assertNull(c.peerPrincipal());
        assertEquals("tcp", ch.currentTransport());
    }

    @Test
    void mutualTlsGivesTheServerTheClientsVerifiedIdentity() throws Exception {
        RpcServer s = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.REQUIRE).build(), RdmaUnderTls.NEVER);
        RpcChannel ch = channel(s, TlsFiles.client("client").build());
        assertEquals("CN=test-client", whoAmI(ch));
        PeerConnection c = awaitOpened();
        assertEquals("CN=test-client", c.peerPrincipal().getName());
        assertTrue(c.peerCertificates().length >= 1);
    }

    @Test
    void optionalClientAuthServesClientsWithAndWithoutCertificates() throws Exception {
        RpcServer s = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.OPTIONAL).build(), RdmaUnderTls.NEVER);
        assertEquals("CN=test-client", whoAmI(channel(s, TlsFiles.client("client").build())));
        assertEquals("", whoAmI(channel(s, TlsFiles.client().build())));
    }

    @Test
    void plaintextServersShowNoSession() throws Exception {
        RpcServer s = RpcServer.forPort(0).addService(whoAmI()).build().start();
        toClose.add(s);
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", s.getPort()).build();
        toClose.add(ch);
        assertEquals("plaintext", whoAmI(ch));
    }

    @Test
    void theAuthorityOverrideNamesTheHostTheCertificateMustName() throws Exception {
        RpcServer s = server(TlsFiles.server("wrong-host-server").build(), RdmaUnderTls.NEVER);
        assertEquals("", whoAmI(channel(s, TlsFiles.client().authorityOverride("wrong.example").build())));
    }

    @Test
    void underTlsNoRdmaIsOfferedOrAcceptedByDefault() throws Exception {
        RpcServer s = server(TlsFiles.server("server").build(), RdmaUnderTls.NEVER);
        assertEquals("", whoAmI(channel(s, TlsFiles.client().build())));
        assertEquals("", whoAmI(channel(s, TlsFiles.client().build(), RdmaUnderTls.AUTHENTICATE_ONLY)));
        assertEquals(List.of(new RecordingUpgrader.Prepared(true, true)), RecordingUpgrader.PREPARED,
                "only the client allowed to was asked for an offer; the server declined without preparing one");
    }

    @Test
    void authenticateOnlyPreparesTheUpgradeOnlyAfterTheHandshakeOnBothSides() throws Exception {
        RpcServer s = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.OPTIONAL).build(), RdmaUnderTls.AUTHENTICATE_ONLY);
        assertEquals("CN=test-client", whoAmI(channel(s, TlsFiles.client("client").build(), RdmaUnderTls.AUTHENTICATE_ONLY)));
        assertEquals(List.of(new RecordingUpgrader.Prepared(true, true), new RecordingUpgrader.Prepared(false, true)),
                RecordingUpgrader.PREPARED, "both sides prepared their offer on a connection whose TLS handshake had completed");
    }

    @Test
    void authenticateOnlyUpgradesNoClientWithoutAVerifiedCertificate() throws Exception {
        RpcServer none = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.NONE).build(), RdmaUnderTls.AUTHENTICATE_ONLY);
        // the server asks for no certificate, so even a client that has one presents none
        assertEquals("", whoAmI(channel(none, TlsFiles.client("client").build(), RdmaUnderTls.AUTHENTICATE_ONLY)));
        RpcServer optional = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.OPTIONAL).build(),
                RdmaUnderTls.AUTHENTICATE_ONLY);
        assertEquals("", whoAmI(channel(optional, TlsFiles.client().build(), RdmaUnderTls.AUTHENTICATE_ONLY)));
        assertEquals(List.of(new RecordingUpgrader.Prepared(true, true), new RecordingUpgrader.Prepared(true, true)),
                RecordingUpgrader.PREPARED, "both clients offered the upgrade; the servers prepared none for an anonymous client");
    }

    @Test
    void plaintextStillUpgradesAsBefore() throws Exception {
        RpcServer s = RpcServer.forPort(0).addService(whoAmI()).build().start();
        toClose.add(s);
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", s.getPort()).build();
        toClose.add(ch);
        assertEquals("plaintext", whoAmI(ch));
        assertEquals(List.of(new RecordingUpgrader.Prepared(true, false), new RecordingUpgrader.Prepared(false, false)),
                RecordingUpgrader.PREPARED);
    }

    @Test
    void requiringRdmaUnderTlsWithoutAllowingItIsRefusedAtBuild() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> RpcChannel.forAddress("127.0.0.1", 1)
                .tls(TlsFiles.client().build()).transportMode(TransportMode.RDMA).build());
        assertTrue(e.getMessage().contains("rdmaUnderTls(AUTHENTICATE_ONLY)"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> RpcServer.forPort(0).tls(TlsFiles.client().build()).build(),
                "a client configuration on a server");
    }

    @Test
    void renewedCertificatesAreUsedForNewConnectionsWithoutARestart(@TempDir Path dir) throws Exception {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Files.copy(TlsFiles.file("untrusted-server.pem"), cert);
        Files.copy(TlsFiles.file("untrusted-server.key"), key);
        RpcServer s = server(TlsConfig.forServer(cert, key).build(), RdmaUnderTls.NEVER);
        StatusException before = assertThrows(StatusException.class, () -> whoAmI(channel(s, TlsFiles.client().build())));
        assertTrue(before.getStatus().getDescription().contains("not trusted"), before.getStatus().getDescription());

        Files.copy(TlsFiles.file("server.pem"), cert, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(TlsFiles.file("server.key"), key, StandardCopyOption.REPLACE_EXISTING);
        FileTime later = FileTime.fromMillis(System.currentTimeMillis() + 60_000);
        Files.setLastModifiedTime(cert, later);
        Files.setLastModifiedTime(key, later);
        assertEquals("", whoAmI(channel(s, TlsFiles.client().build())), "the renewed certificate is trusted");
    }
}
