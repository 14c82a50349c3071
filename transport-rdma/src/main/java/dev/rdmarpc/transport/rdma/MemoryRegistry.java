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
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Registers every slab of the pools the transport uses as one memory region per device context, once, when the pool
 * creates it ({@link SlabListener}), and deregisters it when the pool frees it. A slab's regions are kept in
 * {@link Slab#attach} as {@link Registrations}, one slot per device context ({@link #device()}), so finding a buffer's
 * lkey on a device is a field read and an array read. Regions grant local access and memory-window binding only: a
 * peer can read a slab solely through a window bound for one rendezvous.
 */
final class MemoryRegistry implements SlabListener {
    /** Device contexts a process may open (each takes one slot in every slab's {@link Registrations}). */
    static final int MAX_DEVICES = 32;
    /** Which slots open device contexts hold; a closed context's slot is reused. Guarded by itself. */
    private static final boolean[] SLOTS = new boolean[MAX_DEVICES];

    private final ProtectionDomain pd;
    private final int access;
    private final int device;
    private final Set<SlabPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    private volatile String lastFailure;
    /** Set by {@link #close}; guarded by {@link #pools}. */
    private boolean closed;

    MemoryRegistry(ProtectionDomain pd, int access) {
        this.pd = pd;
        this.access = access;
        this.device = takeSlot();
    }

    private static int takeSlot() {
        synchronized (SLOTS) {
            for (int i = 0; i < MAX_DEVICES; i++) {
                if (!SLOTS[i]) {
                    SLOTS[i] = true;
                    return i;
                }
            }
        }
        throw new IllegalStateException("more than " + MAX_DEVICES + " RDMA device contexts open in one process");
    }

    /**
     * The device context is closing: stops listening to every pool, deregisters every slab region this registry
     * made, and gives its slot back. The protection domain must still be open.
     */
    void close() {
        List<SlabPool> all;
        synchronized (pools) {
            closed = true;
            all = new ArrayList<>(pools);
            pools.clear();
        }
        for (SlabPool pool : all) {
            pool.removeListener(this);
        }
        synchronized (SLOTS) {
            SLOTS[device] = false;
        }
    }

    /** This registry's slot in every slab's {@link Registrations}. */
    int device() {
        return device;
    }

    /** Registers the pool's slabs now and its future ones as they come; false if a registration failed. */
    boolean addPool(SlabPool pool) {
        synchronized (pools) {
            if (closed) {
                return true; // the context is closing: its reservation fails and the caller opens the device again
            }
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

    /**
     * The registration of the buffer's slab on {@code device} (its lkey), or null if the slab is not registered there.
     * A slab attached to a bare {@link RegisteredMemory} (tests) has it on every device.
     */
    static RegisteredMemory registered(SlabBuffer buffer, int device) {
        Object a = buffer.slab().attachment();
        if (a instanceof Registrations r) {
            return r.regions[device];
        }
        return a instanceof RegisteredMemory m ? m : null;
    }

    /** The region of the buffer's slab on {@code device}, or null if the slab is not registered there. */
    static MemoryRegion region(SlabBuffer buffer, int device) {
        return buffer.slab().attachment() instanceof Registrations r ? r.regions[device] : null;
    }

    @Override
    public void onSlabAdded(Slab slab) {
        synchronized (slab) {
            Registrations r = slab.attachment() instanceof Registrations x ? x : null;
            if (r != null && r.regions[device] != null) {
                return;
            }
            try {
                MemoryRegion mr = pd.registerMemory(slab.segment(), access);
                if (r == null) {
                    r = new Registrations();
                    r.regions[device] = mr;
                    slab.attach(r);
                } else {
                    r.regions[device] = mr;
                }
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
    }

    @Override
    public void onSlabRemoved(Slab slab) {
        synchronized (slab) {
            if (slab.attachment() instanceof Registrations r && r.regions[device] != null) {
                MemoryRegion mr = r.regions[device];
                r.regions[device] = null;
                if (r.isEmpty()) {
                    slab.attach(null);
                }
                mr.close();
                RdmaMetrics.SLAB_REGIONS.decrementAndGet();
            }
        }
    }

    /** One slab's memory regions, by device context. Slots are written under the slab's lock. */
    static final class Registrations {
        final MemoryRegion[] regions = new MemoryRegion[MAX_DEVICES];

        boolean isEmpty() {
            for (MemoryRegion r : regions) {
                if (r != null) {
                    return false;
                }
            }
            return true;
        }
    }
}
