package dev.rdmarpc.core.internal.channel;

/** Reads, for tests in other packages, the state of a {@link ClientConnection} that main code keeps package-private. */
public final class ClientConnections {
    private ClientConnections() {
    }

    /** Streams in the connection's table now. */
    public static int openStreams(ClientConnection connection) {
        return connection.openStreams();
    }
}
