package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.MemoryWindow;
import dev.rdmarpc.transport.rdma.verbs.ProtectionDomain;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * The sender's side of rendezvous: buffers a peer may RDMA-READ, each until its FIN. With type-2 memory windows (the
 * default where the device has them) every grant binds a window of this queue pair over exactly the payload, with a
 * fresh rkey, and the FIN is followed by a LOCAL_INV before the buffer is released; without them every grant
 * registers a region over the payload and deregisters it on FIN. Either way no rkey reads anything after its FIN, with
 * one exception: a read-only mapping sent as an attachment is granted through a cached region of the device with remote
 * read (see {@link #openForeign}), readable with that region's rkey until the cache drops it. Guarded by the
 * endpoint's send lock.
 */
final class RendezvousGrants {
    /** One buffer offered by an RTS. */
    static final class Grant {
        int token;
        int streamId;
        /** Bytes granted. */
        int length;
        SlabBuffer buffer;
        int rkey;
        Window window;
        MemoryRegion region;
        /** Whether its BIND_MW still waits for room on the send queue. */
        boolean bindPending;
        /** For application memory (an attachment): its cached registration (windows), else null. */
        RegistrationCache.Entry<MemoryRegion> foreign;
        /** For application memory: its address, and what runs once the grant no longer references it. */
        long foreignAddress;
        Runnable foreignDone;

        /** Address of the granted bytes. */
        long address() {
            return buffer != null ? buffer.address() : foreignAddress;
        }

        /** The region a window over the granted bytes is bound through. */
        MemoryRegion bindRegion(int device) {
            return foreign != null ? foreign.registration() : MemoryRegistry.region(buffer, device);
        }
    }

    /** A type-2 window and the rkey of its last bind. */
    static final class Window {
        final MemoryWindow mw;
        int rkey;

        Window(MemoryWindow mw) {
            this.mw = mw;
            this.rkey = mw.rkey();
        }

    }

    private final ProtectionDomain pd;
    private final boolean windows;
    /** The device's registrations of application memory (attachments), shared by its connections and reused. */
    private final RegistrationCache<MemoryRegion> registrations;
    /** Access of a per-grant region over application memory: remote read, on demand where the device pages RC READs. */
    private final int foreignRegionAccess;
    private final ArrayDeque<Window> freeWindows = new ArrayDeque<>();
    private final ArrayDeque<Window> allWindows = new ArrayDeque<>();
    private final ArrayDeque<Grant> freeGrants = new ArrayDeque<>();
    private Grant[] table = new Grant[64];
    private int nextToken = 1;
    private int open;
    private long openBytes;

    /** Grants whose attachment memory is pinned (no on-demand paging), with a cache of their own (unit tests). */
    RendezvousGrants(ProtectionDomain pd, boolean windows) {
        this(pd, windows, false, newCache(pd, false));
    }

    /**
     * @param onDemandPaging whether attachment memory is registered on demand (ODP) rather than pinned
     * @param registrations  the device's cache of attachment registrations ({@link #newCache})
     */
    RendezvousGrants(ProtectionDomain pd, boolean windows, boolean onDemandPaging, RegistrationCache<MemoryRegion> registrations) {
        this.pd = pd;
        this.windows = windows;
        this.foreignRegionAccess = AccessFlags.REMOTE_READ | (onDemandPaging ? AccessFlags.ON_DEMAND : 0);
        this.registrations = registrations;
    }

    /**
     * A device's cache of attachment registrations in {@code pd}, bounded by {@link #REGISTRATION_CACHE_BYTES} and
     * {@link #REGISTRATION_CACHE_ENTRIES}; registrations are counted in {@link RdmaMetrics#ATTACHMENT_REGIONS}.
     */
    static RegistrationCache<MemoryRegion> newCache(ProtectionDomain pd, boolean onDemandPaging) {
        return new RegistrationCache<>(new RegistrationCache.Registrar<>() {
            @Override
            public MemoryRegion register(MemorySegment memory, int access) {
                MemoryRegion mr = pd.registerMemory(memory, access);
                RdmaMetrics.ATTACHMENT_REGIONS.incrementAndGet();
                return mr;
            }

            @Override
            public void deregister(MemoryRegion registration) {
                registration.close();
                RdmaMetrics.ATTACHMENT_REGIONS.decrementAndGet();
            }
        }, REGISTRATION_CACHE_BYTES, REGISTRATION_CACHE_ENTRIES, AccessFlags.MW_BIND, onDemandPaging);
    }

    /** Bytes of application memory one device keeps registered for reuse. */
    static final long REGISTRATION_CACHE_BYTES = Long.getLong("rdmarpc.rdma.attachmentCacheBytes", 256L << 20);
    /** Registrations of application memory one device keeps for reuse. */
    static final int REGISTRATION_CACHE_ENTRIES = Integer.getInteger("rdmarpc.rdma.attachmentCacheEntries", 256);

    /** The device's cache of application-memory registrations (for tests and meters). */
    RegistrationCache<MemoryRegion> registrations() {
        return registrations;
    }

    /**
     * Opens a grant over application memory (an attachment's chunk), which stays the application's. With windows the
     * pages of writable memory and of file mappings are registered through the device's cache
     * ({@link #windowRegistration}) and a window of this queue pair is bound over exactly {@code body}. A read-only
     * mapping whose pages the kernel will not pin for window binding, other read-only memory (typically a received
     * attachment sent on: a view of a slab, whose pages the device's slab region pins already) and every grant without
     * windows get a region with remote read over {@code body} for the grant alone: no remotely readable key outlives
     * its grant. {@code done}
     * runs once the grant is released. A registration the device refuses (RLIMIT_MEMLOCK) throws before anything
     * changed, without running {@code done}.
     */
    Grant openForeign(MemorySegment body, int streamId, Runnable done) {
        Grant g = freeGrants.pollLast();
        if (g == null) {
            g = new Grant();
        }
        try {
            if (windows && (!body.isReadOnly() || body.isMapped())) {
                g.foreign = windowRegistration(body);
                if (g.foreign != null) {
                    bindWindow(g);
                } else {
                    registerRegion(g, body, foreignRegionAccess);
                }
            } else {
                registerRegion(g, body, foreignRegionAccess);
            }
        } catch (RuntimeException e) {
            if (g.foreign != null) {
                registrations.release(g.foreign);
                g.foreign = null;
            }
            freeGrants.add(g);
            throw e;
        }
        g.token = nextToken++;
        if (nextToken == 0) {
            nextToken = 1;
        }
        g.streamId = streamId;
        g.foreignAddress = body.address();
        g.foreignDone = done;
        insert(g);
        open++;
        g.length = (int) body.byteSize();
        openBytes += g.length;
        return g;
    }

    /**
     * The device's cached registration a window over {@code body} binds through, or null for a read-only mapping whose
     * pages the kernel will not pin for window binding (MW_BIND counts as write access: EFAULT). Such a mapping gets a
     * region of the grant's own instead: a cached region with remote read would leave its rkey readable, by any queue
     * pair that learnt it, for as long as it stays cached.
     */
    private RegistrationCache.Entry<MemoryRegion> windowRegistration(MemorySegment body) {
        if (!body.isReadOnly()) {
            return registrations.acquire(body);
        }
        try {
            return registrations.acquire(body);
        } catch (RuntimeException e) {
            if (errno(e) != EFAULT) {
                throw e;
            }
            return null;
        }
    }

    /** Gives {@code g} a window (a free one, else a new one) with a fresh rkey; its bind is yet to be posted. */
    private void bindWindow(Grant g) {
        Window w = freeWindows.pollLast();
        if (w == null) {
            w = new Window(pd.allocMemoryWindow(MemoryWindow.TYPE_2));
            allWindows.add(w);
        }
        w.rkey = MemoryWindow.nextRkey(w.rkey);
        g.window = w;
        g.rkey = w.rkey;
        g.bindPending = true;
        RdmaMetrics.BOUND_WINDOWS.incrementAndGet();
    }

    /** Gives {@code g} a region of its own over {@code memory}, deregistered when the grant is released. */
    private void registerRegion(Grant g, MemorySegment memory, int access) {
        g.region = pd.registerMemory(memory, access);
        g.rkey = g.region.rkey();
        RdmaMetrics.RENDEZVOUS_REGIONS.incrementAndGet();
    }

    /** errno of a registration of memory the device cannot pin (for the access asked). */
    static final int EFAULT = 14;

    /** The errno of the verbs call that caused {@code e}, or 0. */
    static int errno(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof VerbsException v) {
                return v.errno();
            }
        }
        return 0;
    }

    /** The rkey each window of this connection carries now: an idle window's is the key of the grant it served last. */
    int[] windowKeys() {
        return allWindows.stream().mapToInt(w -> w.rkey).toArray();
    }

    /** Whether grants are memory windows (else regions). */
    boolean usesWindows() {
        return windows;
    }

    /** Grants currently open. */
    int open() {
        return open;
    }

    /** Bytes of the grants currently open (payloads offered and not yet released). */
    long openBytes() {
        return openBytes;
    }

    /**
     * Opens a grant over {@code length} bytes at {@code offset} of {@code source} (retained until {@link #release}).
     * With windows the caller must post the grant's BIND_MW before the RTS naming it.
     */
    Grant open(SlabBuffer source, long offset, int length, int streamId) {
        Grant g = freeGrants.pollLast();
        if (g == null) {
            g = new Grant();
        }
        g.token = nextToken++;
        if (nextToken == 0) {
            nextToken = 1;
        }
        g.streamId = streamId;
        g.buffer = source.retainedSlice(offset, length);
        try {
            if (windows) {
                bindWindow(g);
            } else {
                registerRegion(g, g.buffer.segment(), AccessFlags.REMOTE_READ);
            }
        } catch (RuntimeException e) {
            g.buffer.release();
            g.buffer = null;
            freeGrants.add(g);
            throw e;
        }
        insert(g);
        open++;
        g.length = length;
        openBytes += length;
        return g;
    }

    /** Removes and returns the grant a FIN names, or null if this side has no such grant on that stream. */
    Grant take(int token, int streamId) {
        int i = token & (table.length - 1);
        Grant g = table[i];
        if (g == null || g.token != token || g.streamId != streamId) {
            return null;
        }
        table[i] = null;
        return g;
    }

    /** Ends a taken grant: deregisters its region (windows are invalidated by the caller first) and frees the buffer. */
    void release(Grant g) {
        if (g.window != null) {
            freeWindows.add(g.window);
            g.window = null;
            RdmaMetrics.BOUND_WINDOWS.decrementAndGet();
        }
        if (g.region != null) {
            g.region.close();
            g.region = null;
            RdmaMetrics.RENDEZVOUS_REGIONS.decrementAndGet();
        }
        if (g.buffer != null) {
            g.buffer.release();
            g.buffer = null;
        }
        if (g.foreign != null) {
            registrations.release(g.foreign);
            g.foreign = null;
        }
        Runnable done = g.foreignDone;
        g.foreignDone = null;
        g.foreignAddress = 0;
        if (done != null) {
            done.run();
        }
        g.bindPending = false;
        open--;
        openBytes -= g.length;
        g.length = 0;
        freeGrants.add(g);
    }

    /**
     * Connection teardown, before the queue pair is destroyed: frees every window. A bound type-2 window holds a
     * reference to its queue pair (rxe waits for it in {@code ibv_destroy_qp}), so windows go first; the grants'
     * buffers are freed by {@link #releaseAll} after the queue pair.
     */
    void closeWindows() {
        for (Window w : allWindows) {
            w.mw.close();
        }
    }

    /**
     * Connection teardown, after the queue pair is destroyed: ends every grant (dropping its hold on the device's
     * cache) and frees the windows.
     */
    void releaseAll() {
        for (int i = 0; i < table.length; i++) {
            Grant g = table[i];
            if (g != null) {
                table[i] = null;
                release(g);
            }
        }
        for (Window w : allWindows) {
            w.mw.close();
        }
        allWindows.clear();
        freeWindows.clear();
    }

    private void insert(Grant g) {
        while (table[g.token & (table.length - 1)] != null) {
            Grant[] old = table;
            table = new Grant[old.length * 2];
            for (Grant o : old) {
                if (o != null) {
                    table[o.token & (table.length - 1)] = o;
                }
            }
        }
        table[g.token & (table.length - 1)] = g;
    }
}
