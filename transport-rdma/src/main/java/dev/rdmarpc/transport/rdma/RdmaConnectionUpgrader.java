package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.RdmaDeviceChoice;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.net.InetAddress;

/**
 * The RDMA transport's entry point for core (found with {@link java.util.ServiceLoader}): offers an RC queue pair in
 * HELLO ({@link Hello#CAP_RDMA}) and, when the peer offers one too, moves the connection's frames onto it. Returns
 * null at once, with the reason logged once and counted, when this side cannot (no device, no kernel RDMA, memlock
 * too low, no room for another queue pair, the device's port is down) or an earlier upgrade with the same peer failed
 * recently ({@link PeerFallbacks}). The device, port and GID follow the connection's local address unless the
 * channel or server was built with an {@link RdmaDeviceChoice}.
 */
public final class RdmaConnectionUpgrader implements ConnectionUpgrader {
    private final RdmaDeviceChoice choice;

    /** The upgrader {@link java.util.ServiceLoader} creates: device, port and GID chosen per connection. */
    public RdmaConnectionUpgrader() {
        this(null);
    }

    private RdmaConnectionUpgrader(RdmaDeviceChoice choice) {
        this.choice = choice;
    }

    @Override
    public String name() {
        return "rdma";
    }

    @Override
    public int capabilityId() {
        return Hello.CAP_RDMA;
    }

    /** Publishes {@link RdmaMetrics} on the registry a server or channel was built with. */
    @Override
    public void bindMeters(Object meterRegistry) {
        RdmaMetrics.bindTo((io.micrometer.core.instrument.MeterRegistry) meterRegistry);
    }

    /** Drops the cached attachment registrations overlapping {@code memory} in every open device context. */
    @Override
    public int invalidateRegistrations(java.lang.foreign.MemorySegment memory) {
        if (!memory.isNative()) {
            return 0;
        }
        int held = 0;
        for (RdmaDeviceContext c : DeviceContexts.all()) {
            held += c.attachmentRegistrations().invalidate(memory.address(), memory.byteSize());
        }
        return held;
    }

    /** This upgrader with an explicit device, port or GID for a channel's or server's connections. */
    @Override
    public ConnectionUpgrader withDevice(RdmaDeviceChoice device) {
        return new RdmaConnectionUpgrader(device);
    }

    @Override
    public Offer prepare(FrameConnection base, SlabPool pool, boolean clientSide) {
        InetAddress peer = base == null ? null : PeerFallbacks.hostOf(base.remoteAddress());
        if (PeerFallbacks.PROCESS.isRemembered(peer)) {
            Fallbacks.record(Fallbacks.PEER_REMEMBERED, "an RDMA upgrade with " + peer.getHostAddress() + " failed in the last "
                    + PeerFallbacks.PROCESS.expirySeconds() + " s (rdmarpc.rdma.peerFallbackSeconds)");
            return null;
        }
        DeviceContexts.ConnectionPath path;
        RdmaDeviceContext context;
        for (int attempt = 0; ; attempt++) {
            try {
                path = DeviceContexts.forConnection(choice, base == null ? null : base.localAddress());
            } catch (DeviceSelector.Unavailable e) {
                Fallbacks.record(e.key, e.getMessage());
                return null;
            }
            context = path.context();
            String unusable = context.unusableReason();
            if (unusable != null) {
                Fallbacks.record(Fallbacks.PORT_DOWN, unusable);
                return null;
            }
            if (!context.registry().addPool(pool)) {
                Fallbacks.record(Fallbacks.MEMLOCK, "memory registration failed: " + context.registry().lastFailure());
                return null;
            }
            if (context.tryReserve()) {
                break;
            }
            if (!context.isClosed() || attempt >= 2) {
                Fallbacks.record(Fallbacks.CAPACITY, "the device context already has " + context.maxEndpoints()
                        + " RDMA connections (raise rdmarpc.rdma.maxConnections)");
                return null;
            }
            // it closed for want of users just now: the next look-up opens the device again
        }
        QueuePair qp;
        try {
            qp = context.createQueuePair();
        } catch (VerbsException e) {
            context.unreserve();
            Fallbacks.record(Fallbacks.QP_FAILED, "creating a queue pair failed: " + e.getMessage());
            return null;
        }
        return new RdmaOffer(path, qp, base, pool, peer);
    }
}
