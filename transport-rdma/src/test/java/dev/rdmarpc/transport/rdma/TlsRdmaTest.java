package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.rdmarpc.core.PeerConnection;
import dev.rdmarpc.core.PeerConnectionListener;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.TransportMode;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * TLS on the connection an RDMA connection starts as: with {@link RdmaUnderTls#AUTHENTICATE_ONLY} on both sides a
 * mutually authenticated peer gets a queue pair (and the server still knows who it is); with the default
 * {@link RdmaUnderTls#NEVER} calls stay on the encrypted TCP path and no queue pair is made; a client the server
 * does not authenticate gets none either.
 */
@Tag("rdma")
class TlsRdmaTest extends RdmaEndToEndBase {

    @Test
    void authenticateOnlyUpgradesAMutuallyAuthenticatedPeer() throws Exception {
        CompletableFuture<PeerConnection> opened = new CompletableFuture<>();
        startServer(b -> b.tls(server()).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY).connectionListener(new PeerConnectionListener() {
            @Override
            public void connectionOpened(PeerConnection connection) {
                opened.complete(connection);
            }
        }));
        RpcChannel ch = channel(b -> b.tls(client().keyCertChain(file("client.pem"), file("client.key")).build())
                .rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY));
        byte[] small = Bytes.pattern(64, 1);
        assertEquals(-1, Bytes.mismatch(small, echo(ch, small, 30_000)));
        assertRdma(ch);
        byte[] large = Bytes.pattern(1 << 20, 2);
        assertEquals(-1, Bytes.mismatch(large, echo(ch, large, 60_000)), "a rendezvous under TLS authentication");
        PeerConnection peer = opened.get(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        assertEquals("CN=test-client", peer.peerPrincipal().getName(), "the server knows the RDMA peer's verified identity");
    }

    @Test
    void theDefaultStaysOnTheEncryptedTcpPath() throws Exception {
        startServer(b -> b.tls(server()));
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
    void aClientTheServerDoesNotAuthenticateGetsNoQueuePair() throws Exception {
        startServer(b -> b.tls(server()).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY));
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        RpcChannel ch = channel(b -> b.tls(client().build()).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY)
                .transportMode(TransportMode.AUTO));
        StatusException e = assertThrows(StatusException.class, () -> echo(ch, Bytes.pattern(64, 4), 30_000));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        RdmaMetrics.Snapshot d = RdmaMetrics.snapshot().minus(before);
        assertEquals(0, d.upgrades(), "no queue pair for a client without a certificate: " + d);
    }

    private static TlsConfig server() {
        return TlsConfig.forServer(file("server.pem"), file("server.key")).trustRoots(file("ca.pem"))
                .clientAuth(TlsConfig.ClientAuth.REQUIRE).build();
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
