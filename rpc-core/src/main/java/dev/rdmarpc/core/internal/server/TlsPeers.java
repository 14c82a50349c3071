package dev.rdmarpc.core.internal.server;

import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/** What a server's TLS session says of its client: whether the client authenticated with a certificate. */
final class TlsPeers {
    private TlsPeers() {
    }

    /**
     * True when there is no TLS session (a plaintext connection: nothing to authenticate) or the client presented a
     * certificate chain that the server's trust roots verified during the handshake (an unverified one fails the
     * handshake, so a chain in the session is a verified one); false for an anonymous TLS client (client auth NONE,
     * or OPTIONAL without a certificate).
     */
    static boolean clientVerified(SSLSession session) {
        if (session == null) {
            return true;
        }
        try {
            return session.getPeerCertificates().length > 0;
        } catch (SSLPeerUnverifiedException e) {
            return false;
        }
    }
}
