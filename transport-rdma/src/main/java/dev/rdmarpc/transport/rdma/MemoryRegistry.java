package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.Slab;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabListener;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.ProtectionDomain;
import dev.rdmarpc.transport.rdma.verbs.RegisteredMemory;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.lang.System.Logger.Level;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Registers every slab of the pools the transport uses as one memory region, once, when the pool creates it
 * ({@link SlabListener}), and deregisters it when the pool frees it. The region is kept in {@link Slab#attach}, so
 * finding a buffer's lkey is a field read. Regions grant local access and memory-window binding only: a peer can
 * read a slab solely through a window bound for one rendezvous.
 */
final class MemoryRegistry implements SlabListener {
    private final ProtectionDomain pd;
    private final int access;
    private final Set<SlabPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    private volatile String lastFailure;

    MemoryRegistry(ProtectionDomain pd, int access) {
        this.pd = pd;
        this.access = access;
    }

    /** Registers the pool's slabs now and its future ones as they come; false if a registration failed. */
    boolean addPool(SlabPool pool) {
        synchronized (pools) {
            if (pools.add(pool)) {
                pool.addListener(this);
            }
        }
        return lastFailure == null;
    }

    /** Why the last registration failed (e.g. RLIMIT_MEMLOCK), or null. */
    String lastFailure() {
        return lastFailure;
    }

    /** The registration of the buffer's slab (its lkey), or null if the slab is not registered. */
    static RegisteredMemory registered(SlabBuffer buffer) {
        return buffer.slab().attachment() instanceof RegisteredMemory m ? m : null;
    }

    /** The region of the buffer's slab, or null if the slab is not registered. */
    static MemoryRegion region(SlabBuffer buffer) {
        return buffer.slab().attachment() instanceof MemoryRegion mr ? mr : null;
    }

    @Override
    public void onSlabAdded(Slab slab) {
        if (slab.attachment() instanceof MemoryRegion) {
            return;
        }
        try {
            slab.attach(pd.registerMemory(slab.segment(), access));
            RdmaMetrics.SLAB_REGIONS.incrementAndGet();
        } catch (VerbsException e) {
            String why = e.getMessage() + (e.errno() == 12 || e.errno() == 1
                    ? " (the locked-memory limit is too low: raise RLIMIT_MEMLOCK, e.g. ulimit -l unlimited)" : "");
            if (lastFailure == null) {
                Fallbacks.LOG.log(Level.WARNING, "cannot register a {0}-byte slab for RDMA: {1}", slab.size(), why);
            }
            lastFailure = why;
        }
    }

    @Override
    public void onSlabRemoved(Slab slab) {
        if (slab.attachment() instanceof MemoryRegion mr) {
            slab.attach(null);
            mr.close();
            RdmaMetrics.SLAB_REGIONS.decrementAndGet();
        }
    }
}
