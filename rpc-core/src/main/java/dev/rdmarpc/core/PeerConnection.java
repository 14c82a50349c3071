package dev.rdmarpc.core;

import java.net.SocketAddress;
import java.security.Principal;
import java.security.cert.Certificate;
import java.util.concurrent.CompletableFuture;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/** One client's connection as a server sees it: who and over what, with the server's controls over it. */
public interface PeerConnection {

    /** The client's address. */
    SocketAddress remoteAddress();

    /** The server's own address on this connection. */
    SocketAddress localAddress();

    /** The transport now carrying the connection's frames: "tcp" or "rdma". */
    String transportName();

    /** Calls open on the connection now. */
    int activeCalls();

    /**
     * Sends a PING to the client: completes with the round trip in nanoseconds when its ACK arrives, or fails with
     * a {@link StatusException} (UNAVAILABLE) if the connection closes first.
     */
    CompletableFuture<Long> ping();

    /**
     * Graceful end: GOAWAY to the client, which opens no new calls here (calls it started before it heard are still
     * served); the connection closes once its open calls end.
     */
    void goAway();

    /** Closes the connection now; its open calls fail. */
    void close(String reason);

    /** The TLS session of the connection (its handshake has completed), or null when the client connected without TLS. */
    default SSLSession sslSession() {
        return null;
    }

    /**
     * The client's certificate chain as verified by the server's trust roots (leaf first); empty without TLS or
     * when the client sent no certificate (client auth NONE or OPTIONAL).
     */
    default Certificate[] peerCertificates() {
        SSLSession s = sslSession();
        if (s == null) {
            return new Certificate[0];
        }
        try {
            return s.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return new Certificate[0];
        }
    }

    /** The verified client certificate's subject, or null without TLS or without a client certificate. */
    default Principal peerPrincipal() {
        SSLSession s = sslSession();
        if (s == null) {
            return null;
        }
        try {
            return s.getPeerPrincipal();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}
