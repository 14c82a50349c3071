package dev.rdmarpc.core;

import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;

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
}
