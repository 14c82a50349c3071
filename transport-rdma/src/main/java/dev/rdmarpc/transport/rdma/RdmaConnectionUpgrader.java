package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

/**
 * The RDMA transport's entry point for core (found with {@link java.util.ServiceLoader}): offers an RC queue pair in
 * HELLO ({@link Hello#CAP_RDMA}) and, when the peer offers one too, moves the connection's frames onto it. Returns
 * null at once, with the reason logged once and counted, when this side cannot (no device, no kernel RDMA, memlock
 * too low, no room for another queue pair).
 */
public final class RdmaConnectionUpgrader implements ConnectionUpgrader {
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

    @Override
    public Offer prepare(FrameConnection base, SlabPool pool, boolean clientSide) {
        RdmaDeviceContext context;
        try {
            context = RdmaDeviceContext.shared();
        } catch (DeviceSelector.Unavailable e) {
            Fallbacks.record(e.key, e.getMessage());
            return null;
        }
        if (!context.registry().addPool(pool)) {
            Fallbacks.record(Fallbacks.MEMLOCK, "memory registration failed: " + context.registry().lastFailure());
            return null;
        }
        if (!context.tryReserve()) {
            Fallbacks.record(Fallbacks.CAPACITY, "the device context already has " + context.maxEndpoints()
                    + " RDMA connections (raise rdmarpc.rdma.maxConnections)");
            return null;
        }
        QueuePair qp;
        try {
            qp = context.createQueuePair();
        } catch (VerbsException e) {
            context.unreserve();
            Fallbacks.record(Fallbacks.QP_FAILED, "creating a queue pair failed: " + e.getMessage());
            return null;
        }
        return new RdmaOffer(context, qp, base, pool);
    }
}
