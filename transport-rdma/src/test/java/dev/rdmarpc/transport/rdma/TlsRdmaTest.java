package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.TransportMode;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * TLS on the connection an RDMA connection starts as. With {@link RdmaUnderTls#AUTHENTICATE_ONLY} on both sides a
 * peer authenticated both ways gets a queue pair, and the TLS session that authenticated it stays visible on both
 * sides' calls; a client without a verified certificate (client auth NONE, or OPTIONAL without one) stays on TLS over
 * TCP, counted by the server; with client auth REQUIRE it is refused at the handshake. With the default
 * {@link RdmaUnderTls#NEVER} calls stay on the encrypted TCP path and no queue pair is made.
 */
@Tag("rdma")
class TlsRdmaTest extends RdmaEndToEndBase {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** The TLS session each call saw on the server, null for none. */
    private final BlockingQueue<Optional<SSLSession>> sessions = new LinkedBlockingQueue<>();

    /** A server with TLS at this client auth, AUTHENTICATE_ONLY, meters, and the session of each call recorded. */
    private void startAuthenticateOnly(TlsConfig.ClientAuth auth, TransportMode mode) throws Exception {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                sessions.add(Optional.ofNullable(call.getSslSession()));
                return next.startCall(call, headers);
            }
        };
        startServer(b -> b.tls(server(auth)).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY).transportMode(mode)
                .meterRegistry(registry).intercept(recorder));
    }

    private RpcChannel authenticateOnlyClient(boolean withCertificate, TransportMode mode) {
        TlsConfig.Builder tls = client();
        if (withCertificate) {
            tls.keyCertChain(file("client.pem"), file("client.key"));
        }
        return channel(b -> b.tls(tls.build()).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY).transportMode(mode));
    }

    private double refusedUpgrades() {
        var c = registry.find("rdmarpc.server.upgrades.refused").tags("reason", "no-client-certificate").counter();
        return c == null ? 0 : c.count();
    }

    private SSLSession serverSession() throws InterruptedException {
        Optional<SSLSession> s = sessions.poll(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        assertNotNull(s, "the server saw the call");
        return s.orElseThrow(() -> new AssertionError("the server call had no TLS session"));
    }

    /** A call on a client without a certificate succeeds and stays on TLS over TCP, counted once. */
    private void anonymousClientStaysOnTcp(TlsConfig.ClientAuth auth, boolean clientHasCertificate) throws Exception {
        startAuthenticateOnly(auth, TransportMode.AUTO);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel ch = authenticateOnlyClient(clientHasCertificate, TransportMode.AUTO);
        byte[] req = Bytes.pattern(4096, 5);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertEquals("tcp", ch.currentTransport(), "a client the server did not authenticate stays on TLS over TCP");
        assertNotNull(ch.currentSslSession(), "still under TLS");
        assertEquals(0, RdmaMetrics.snapshot().minus(before).upgrades(), "no queue pair was made");
        assertEquals(1.0, refusedUpgrades(), "the refused upgrade is counted");
        assertThrows(SSLPeerUnverifiedException.class, () -> serverSession().getPeerCertificates(), "an anonymous client");
    }

    @Test
    void authenticateOnlyUpgradesAMutuallyAuthenticatedPeer() throws Exception {
        CompletableFuture<PeerConnection> opened = new CompletableFuture<>();
        startServer(b -> b.tls(server(TlsConfig.ClientAuth.REQUIRE)).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY)
                .connectionListener(new PeerConnectionListener() {
                    @Override
                    public void connectionOpened(PeerConnection connection) {
                        opened.complete(connection);
                    }
                }));
        RpcChannel ch = authenticateOnlyClient(true, TransportMode.RDMA);
        byte[] small = Bytes.pattern(64, 1);
        assertEquals(-1, Bytes.mismatch(small, echo(ch, small, 30_000)));
        assertRdma(ch);
        byte[] large = Bytes.pattern(1 << 20, 2);
        assertEquals(-1, Bytes.mismatch(large, echo(ch, large, 60_000)), "a rendezvous under TLS authentication");
        PeerConnection peer = opened.get(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        assertEquals("CN=test-client", peer.peerPrincipal().getName(), "the server knows the RDMA peer's verified identity");
    }

    @Test
    void optionalClientAuthUpgradesAClientWithACertificateAndCallsKeepTheSession() throws Exception {
        startAuthenticateOnly(TlsConfig.ClientAuth.OPTIONAL, TransportMode.AUTO);
        RpcChannel ch = authenticateOnlyClient(true, TransportMode.AUTO);
        byte[] req = Bytes.pattern(4096, 6);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertRdma(ch);
        SSLSession onServer = serverSession();
        assertEquals("CN=test-client", onServer.getPeerPrincipal().getName(),
                "a native ServerCall over RDMA carries the session that authenticated the upgrade");
        SSLSession onClient = ch.currentSslSession();
        assertNotNull(onClient, "the client's connection over RDMA keeps its TLS session");
        assertEquals("CN=localhost", ((X509Certificate) onClient.getPeerCertificates()[0]).getSubjectX500Principal().getName(),
                "the session that authenticated the server");
        assertEquals(0.0, refusedUpgrades());
    }

    @Test
    void optionalClientAuthKeepsAClientWithoutACertificateOnTcp() throws Exception {
        anonymousClientStaysOnTcp(TlsConfig.ClientAuth.OPTIONAL, false);
    }

    @Test
    void noClientAuthKeepsEveryClientOnTcp() throws Exception {
        anonymousClientStaysOnTcp(TlsConfig.ClientAuth.NONE, true); // not asked for, the client sends no certificate
    }

    @Test
    void aServerThatRequiresRdmaClosesAnAnonymousClientsConnectionNamingWhy() throws Exception {
        startAuthenticateOnly(TlsConfig.ClientAuth.OPTIONAL, TransportMode.RDMA);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel ch = authenticateOnlyClient(false, TransportMode.AUTO);
        StatusException e = assertThrows(StatusException.class, () -> echo(ch, Bytes.pattern(64, 7), 30_000));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        assertEquals(0, RdmaMetrics.snapshot().minus(before).upgrades(), "no queue pair for a client without a certificate");
        assertEquals(1.0, refusedUpgrades());
    }

    @Test
    void theDefaultStaysOnTheEncryptedTcpPath() throws Exception {
        startServer(b -> b.tls(server(TlsConfig.ClientAuth.REQUIRE)));
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel ch = channel(b -> b.tls(client().keyCertChain(file("client.pem"), file("client.key")).build())
                .transportMode(TransportMode.AUTO));
        byte[] req = Bytes.pattern(4096, 3);
        assertEquals(-1, Bytes.mismatch(req, echo(ch, req, 30_000)));
        assertEquals("tcp", ch.currentTransport(), "under TLS without AUTHENTICATE_ONLY calls stay on TCP");
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertEquals(0, d.upgrades(), "no queue pair was made: " + d);
    }

    @Test
    void requiredClientAuthRefusesAClientWithoutACertificateAtTheHandshake() throws Exception {
        startAuthenticateOnly(TlsConfig.ClientAuth.REQUIRE, TransportMode.AUTO);
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel ch = authenticateOnlyClient(false, TransportMode.AUTO);
        StatusException e = assertThrows(StatusException.class, () -> echo(ch, Bytes.pattern(64, 4), 30_000));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertEquals(0, d.upgrades(), "no queue pair for a client without a certificate: " + d);
    }

    private static TlsConfig server(TlsConfig.ClientAuth auth) {
        return TlsConfig.forServer(file("server.pem"), file("server.key")).trustRoots(file("ca.pem")).clientAuth(auth).build();
    }

    private static TlsConfig.Builder client() {
        return TlsConfig.forClient().trustRoots(file("ca.pem"));
    }

    private static Path file(String name) {
        URL u = TlsRdmaTest.class.getResource("/tls/" + name);
        if (u == null) {
            throw new IllegalStateException("missing test resource tls/" + name);
        }
        try {
            return Path.of(u.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
