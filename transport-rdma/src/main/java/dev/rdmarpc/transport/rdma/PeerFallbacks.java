package dev.rdmarpc.transport.rdma;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Peers with which an RDMA upgrade failed (a queue-pair transition that the kernel refused), remembered for a while so
 * that new connections with them stay on TCP without offering or accepting RDMA. Keyed by the peer's IP address;
 * bounded (the least recently failed peer is forgotten first) and each entry expires after
 * {@code rdmarpc.rdma.peerFallbackSeconds} (default 300; 0 remembers nothing).
 */
final class PeerFallbacks {
    /** The process's memory, used by every connection. */
    static final PeerFallbacks PROCESS = new PeerFallbacks(
            TimeUnit.SECONDS.toNanos(Long.getLong("rdmarpc.rdma.peerFallbackSeconds", 300)),
            Integer.getInteger("rdmarpc.rdma.peerFallbackMaxPeers", 1024), System::nanoTime);

    private final long expiryNanos;
    private final int maxPeers;
    private final LongSupplier clock;
    private final LinkedHashMap<InetAddress, Long> failedAt = new LinkedHashMap<>();

    PeerFallbacks(long expiryNanos, int maxPeers, LongSupplier clock) {
        if (maxPeers < 1) {
            throw new IllegalArgumentException("rdmarpc.rdma.peerFallbackMaxPeers must be at least 1: " + maxPeers);
        }
        this.expiryNanos = Math.max(0, expiryNanos);
        this.maxPeers = maxPeers;
        this.clock = clock;
    }

    /** The IP of a socket address, or null when it has none. */
    static InetAddress hostOf(SocketAddress address) {
        return address instanceof InetSocketAddress a ? a.getAddress() : null;
    }

    /** Remembers that RDMA with {@code peer} failed now; true when the peer was not remembered already. */
    synchronized boolean remember(InetAddress peer) {
        if (peer == null || expiryNanos == 0) {
            return false;
        }
        boolean fresh = !isRememberedLocked(peer);
        failedAt.remove(peer);
        failedAt.put(peer, clock.getAsLong());
        while (failedAt.size() > maxPeers) {
            Map.Entry<InetAddress, Long> oldest = failedAt.entrySet().iterator().next();
            failedAt.remove(oldest.getKey());
        }
        return fresh;
    }

    /** Whether new connections with {@code peer} should stay on TCP. */
    synchronized boolean isRemembered(InetAddress peer) {
        return peer != null && isRememberedLocked(peer);
    }

    private boolean isRememberedLocked(InetAddress peer) {
        Long at = failedAt.get(peer);
        if (at == null) {
            return false;
        }
        if (clock.getAsLong() - at >= expiryNanos) {
            failedAt.remove(peer);
            return false;
        }
        return true;
    }

    /** How long a failure is remembered, in seconds (for log messages). */
    long expirySeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(expiryNanos);
    }

    /** Peers remembered now (expired ones are dropped first). */
    synchronized int size() {
        failedAt.entrySet().removeIf(e -> clock.getAsLong() - e.getValue() >= expiryNanos);
        return failedAt.size();
    }

    /** Forgets every peer (tests). */
    synchronized void clear() {
        failedAt.clear();
    }
}
