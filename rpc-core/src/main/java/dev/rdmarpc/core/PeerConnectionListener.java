package dev.rdmarpc.core;

/** Told by a server when a client's connection is established (after the HELLO exchange) and when it closes. */
public interface PeerConnectionListener {

    /** A client connected; {@code connection} stays the same object for this connection's calls. */
    void connectionOpened(PeerConnection connection);

    /** The connection closed, for {@code reason}. */
    default void connectionClosed(PeerConnection connection, String reason) {
    }

    /**
     * The client sent a PING, which core has already answered; on the connection's I/O thread, so keep it short. A
     * server that limits how often clients may ping (as grpc's {@code permitKeepAliveTime}) counts them here.
     */
    default void pingReceived(PeerConnection connection) {
    }
}
