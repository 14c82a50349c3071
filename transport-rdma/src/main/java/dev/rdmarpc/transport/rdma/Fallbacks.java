package dev.rdmarpc.transport.rdma;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Why connections stay on TCP: each distinct reason is logged once at INFO, every occurrence is counted. */
final class Fallbacks {
    static final System.Logger LOG = System.getLogger("dev.rdmarpc.transport.rdma");

    /** No usable device: no libibverbs, no kernel RDMA (ENOSYS), no device or no active port. */
    static final String NO_DEVICE = "no-device";
    /** Memory could not be registered (RLIMIT_MEMLOCK too low). */
    static final String MEMLOCK = "memlock";
    /** The peer's HELLO offered no RDMA. */
    static final String PEER_WITHOUT_RDMA = "peer-without-rdma";
    /** Creating or connecting the queue pair failed. */
    static final String QP_FAILED = "qp-transition-failed";
    /** The device context has no room for another queue pair. */
    static final String CAPACITY = "capacity";
    /** An earlier upgrade with this peer failed (see {@link PeerFallbacks}): its connections stay on TCP for a while. */
    static final String PEER_REMEMBERED = "peer-remembered";
    /** The device's port is down or the device failed (async event): new connections stay on TCP until it is active. */
    static final String PORT_DOWN = "port-down";
    /** Every reason, in the order the meters list them. */
    static final List<String> REASONS = List.of(NO_DEVICE, MEMLOCK, PEER_WITHOUT_RDMA, QP_FAILED, CAPACITY,
            PEER_REMEMBERED, PORT_DOWN);

    private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

    private Fallbacks() {
    }

    /** Counts a fallback and logs its reason the first time it is seen. */
    static void record(String key, String reason) {
        RdmaMetrics.fallback(key);
        if (LOGGED.add(key + '\n' + reason)) {
            LOG.log(Level.INFO, "RDMA not used, connections stay on TCP ({0}): {1}", key, reason);
        }
    }
}
