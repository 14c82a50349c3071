package dev.rdmarpc.transport.tcp;

/** What a TLS connection's first bytes said, shared by {@link PlaintextPeerDetector} and {@link TcpChannelHandler}. */
final class TlsHandshakeState {
    /** Set when the peer spoke plaintext: what it sent, for the failure reason. */
    String plaintextPeer;
    /** Whether any byte arrived from the peer before the handshake ended. */
    boolean bytesReceived;
}
