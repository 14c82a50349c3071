package dev.rdmarpc.grpc;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The addresses one {@link RdmaChannelBuilder} channel in {@code WireProtocol.AUTO} found to be standard gRPC servers
 * (a connection to them ended up speaking HTTP/2 in cleartext), remembered for {@link #REMEMBER_NANOS}: the channel's
 * next connections to them start with HTTP/2 instead of offering rdmarpc's HELLO first. Thread-safe.
 */
final class Http2Targets {
    /** How long an address is remembered: as long as the transport remembers one, 10 minutes. */
    static final long REMEMBER_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** Addresses kept at most; past it the memory starts over (a channel dials few addresses). */
    static final int MAX_ADDRESSES = 1024;

    private final Map<InetSocketAddress, Long> until = new ConcurrentHashMap<>();

    void remember(InetSocketAddress address) {
        if (until.size() >= MAX_ADDRESSES) {
            until.clear();
        }
        until.put(address, System.nanoTime() + REMEMBER_NANOS);
    }

    boolean isHttp2(InetSocketAddress address) {
        Long t = until.get(address);
        if (t != null && System.nanoTime() - t >= 0) {
            until.remove(address, t);
            return false;
        }
        return t != null;
    }
}
