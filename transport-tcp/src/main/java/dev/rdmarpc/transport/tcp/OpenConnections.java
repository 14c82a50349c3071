package dev.rdmarpc.transport.tcp;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A transport's open connections, so that closing the transport closes each with a reason, late arrivals included. */
final class OpenConnections {
    private final Set<TcpFrameConnection> open = ConcurrentHashMap.newKeySet();
    private volatile String closedReason;

    /** Adds a newly bound connection; closes it at once if the transport is already closing. */
    void add(TcpFrameConnection c) {
        open.add(c);
        String reason = closedReason;
        if (reason != null) {
            c.close(reason);
        }
    }

    void remove(TcpFrameConnection c) {
        open.remove(c);
    }

    /** Closes every open connection, and any added later, with {@code reason}. */
    void closeAll(String reason) {
        closedReason = reason;
        for (TcpFrameConnection c : open) {
            c.close(reason);
        }
    }

    int size() {
        return open.size();
    }
}
