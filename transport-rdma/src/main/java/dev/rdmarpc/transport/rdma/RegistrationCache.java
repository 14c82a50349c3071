package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.OdpCapabilities;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Registrations of application memory (attachments sent from the caller's own memory), kept for reuse: a pin-down cache
 * keyed by address range and access, one per protection domain (device context), shared by every connection on it. A
 * lookup finds a live entry with the same access whose range contains the one asked for and that belongs to the same
 * memory (the segment's {@link MemorySegment.Scope}: memory freed and mapped again at the same address under another
 * arena never hits an old entry); otherwise it registers the range's pages. The cache is bounded by bytes and by
 * entries and evicts the least recently used entries that no send holds. An entry whose memory its owner closed is
 * invalidated: deregistered as soon as no send holds it ({@link #sweep}, and on every miss). While a send holds an
 * entry its pages stay pinned by the registration, so the device never reads memory given to someone else.
 * Registration uses on-demand paging when the device reports it (no pinning). Thread-safe: every method takes the
 * cache's own monitor, which is a leaf (the registrar's verbs calls run under it, never application code); connections
 * call it under their {@code SendPath.lock}.
 *
 * @param <R> the registration (a memory region; a fake one in unit tests)
 */
final class RegistrationCache<R> {
    /** Registers and deregisters memory; a verbs protection domain in production. */
    interface Registrar<R> {
        /** Registers {@code memory} with {@code access}; throws when the device refuses (e.g. RLIMIT_MEMLOCK). */
        R register(MemorySegment memory, int access);

        /** Deregisters; the device can no longer reach the memory when this returns. */
        void deregister(R registration);
    }

    /** One registered range. */
    static final class Entry<R> {
        final long start;
        final long end;
        final MemorySegment.Scope scope;
        /** The access it was registered with (without {@link AccessFlags#ON_DEMAND}). */
        final int access;
        final R registration;
        /** Sends holding the entry. */
        int holds;
        long lastUse;
        /** False for a registration the cache could not keep (over its bounds with every entry held). */
        boolean cached;

        Entry(long start, long end, MemorySegment.Scope scope, int access, R registration) {
            this.start = start;
            this.end = end;
            this.scope = scope;
            this.access = access;
            this.registration = registration;
        }

        /** The registration, for the lkey or the window bind. */
        R registration() {
            return registration;
        }

        long bytes() {
            return end - start;
        }
    }

    static final long PAGE = 4096;

    private final Registrar<R> registrar;
    private final long maxBytes;
    private final int maxEntries;
    private final int access;
    private final int onDemand;
    private final TreeMap<Long, List<Entry<R>>> byStart = new TreeMap<>();
    private long bytes;
    private int entries;
    private long tick;
    private long hits;
    private long misses;
    private long registrations;
    private long evictions;

    /**
     * @param maxBytes       registered bytes the cache keeps at most
     * @param maxEntries     registrations it keeps at most
     * @param access         access flags of every registration (local access and window binding)
     * @param onDemandPaging whether the device reports on-demand paging: registrations then pin nothing
     */
    RegistrationCache(Registrar<R> registrar, long maxBytes, int maxEntries, int access, boolean onDemandPaging) {
        this.registrar = registrar;
        this.maxBytes = maxBytes;
        this.maxEntries = maxEntries;
        this.onDemand = onDemandPaging ? AccessFlags.ON_DEMAND : 0;
        this.access = access | onDemand;
    }

    /** The system property that turns on-demand paging of attachment memory off ({@code off}); {@code auto} by default. */
    static final String ON_DEMAND_PAGING_PROPERTY = "rdmarpc.rdma.onDemandPaging";

    /**
     * Whether attachment memory is registered on demand (ODP: the device faults pages in, nothing is pinned, so
     * RLIMIT_MEMLOCK does not bound it): when the device reports ODP for RC remote READ (peers READ the attachment),
     * unless {@code setting} is {@code off}.
     */
    static boolean useOnDemandPaging(String setting, OdpCapabilities device) {
        String s = setting == null ? "auto" : setting.trim().toLowerCase(java.util.Locale.ROOT);
        return switch (s) {
            case "off", "false" -> false;
            case "auto", "", "on", "true" -> device.supportsRcRemoteRead();
            default -> throw new IllegalArgumentException(ON_DEMAND_PAGING_PROPERTY + " must be auto or off, not " + setting);
        };
    }

    /** The access flags registrations use by default (with ON_DEMAND where the device pages on demand). */
    int access() {
        return access;
    }

    /** {@link #acquire(MemorySegment, int)} with the cache's default access. */
    Entry<R> acquire(MemorySegment memory) {
        return acquire(memory, access & ~AccessFlags.ON_DEMAND);
    }

    /**
     * An entry covering {@code memory} registered with {@code access} (plus ON_DEMAND where the device pages on demand),
     * held until {@link #release}: a cached one, or a new registration of the pages that contain it. A registration the
     * device refuses fails with a message naming RLIMIT_MEMLOCK when that is the cause, after dropping every entry no
     * send holds and trying once more.
     */
    synchronized Entry<R> acquire(MemorySegment memory, int access) {
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered for RDMA");
        }
        Entry<R> hit = acquireIfCached(memory, access);
        if (hit != null) {
            return hit;
        }
        long address = memory.address();
        long end = address + memory.byteSize();
        MemorySegment.Scope scope = memory.scope();
        misses++;
        sweep();
        long start = address & -PAGE;
        long stop = (end + PAGE - 1) & -PAGE;
        // the whole pages around the range: later sends of neighbouring ranges hit this entry
        MemorySegment pages = MemorySegment.ofAddress(start).reinterpret(stop - start);
        R registration;
        try {
            registration = registrar.register(pages, access | onDemand);
        } catch (RuntimeException first) {
            // only the locked-memory limit is helped by deregistering idle entries (not e.g. EFAULT)
            if (!isMemlock(first) || evictUnheld(Long.MAX_VALUE) == 0) {
                throw refused(first, stop - start);
            }
            try {
                registration = registrar.register(pages, access | onDemand);
            } catch (RuntimeException second) {
                throw refused(second, stop - start);
            }
        }
        registrations++;
        Entry<R> e = new Entry<>(start, stop, scope, access, registration);
        e.holds = 1;
        e.lastUse = tick;
        makeRoomFor(e.bytes());
        if (bytes + e.bytes() <= maxBytes && entries < maxEntries) {
            e.cached = true;
            byStart.computeIfAbsent(start, k -> new ArrayList<>(1)).add(e);
            bytes += e.bytes();
            entries++;
        }
        return e;
    }

    /** A cached entry with {@code access} covering {@code memory}, held until {@link #release}; null if there is none. */
    synchronized Entry<R> acquireIfCached(MemorySegment memory, int access) {
        long address = memory.address();
        Entry<R> hit = find(address, address + memory.byteSize(), memory.scope(), access);
        tick++;
        if (hit != null) {
            hits++;
            hit.holds++;
            hit.lastUse = tick;
        }
        return hit;
    }

    /** Drops a send's hold; an entry the cache does not keep, or whose memory was closed, is deregistered now. */
    synchronized void release(Entry<R> e) {
        if (e.holds <= 0) {
            throw new IllegalStateException("registration released more often than acquired");
        }
        e.holds--;
        if (e.holds == 0 && (!e.cached || !e.scope.isAlive())) {
            if (e.cached) {
                remove(e);
            }
            registrar.deregister(e.registration);
        }
    }

    /** Deregisters every entry whose memory its owner has closed and that no send holds; returns how many. */
    synchronized int sweep() {
        List<Entry<R>> dead = new ArrayList<>();
        for (List<Entry<R>> list : byStart.values()) {
            for (Entry<R> e : list) {
                if (e.holds == 0 && !e.scope.isAlive()) {
                    dead.add(e);
                }
            }
        }
        for (Entry<R> e : dead) {
            remove(e);
            registrar.deregister(e.registration);
        }
        return dead.size();
    }

    /**
     * Invalidation hook, to call before the memory {@code [address, address+length)} is unmapped or reused: every
     * entry overlapping it that no send holds is deregistered now, and a held one as soon as it is released. Returns
     * the entries still held (the caller must not unmap before they are released).
     */
    synchronized int invalidate(long address, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        long end = length > Long.MAX_VALUE - address ? Long.MAX_VALUE : address + length;
        List<Entry<R>> hit = new ArrayList<>();
        for (Map.Entry<Long, List<Entry<R>>> m : byStart.headMap(end, false).entrySet()) {
            for (Entry<R> e : m.getValue()) {
                if (e.end > address) {
                    hit.add(e);
                }
            }
        }
        int held = 0;
        for (Entry<R> e : hit) {
            remove(e);
            if (e.holds == 0) {
                registrar.deregister(e.registration);
            } else {
                e.cached = false; // deregistered by its last release
                held++;
            }
        }
        return held;
    }

    /** Deregisters every entry no send holds (device teardown); held ones go on their release. */
    void clear() {
        invalidate(0, Long.MAX_VALUE);
    }

    /** Registrations the cache keeps. */
    synchronized int entries() {
        return entries;
    }

    /** Bytes of the registrations the cache keeps. */
    synchronized long bytes() {
        return bytes;
    }

    /** The registrations the cache keeps. */
    synchronized List<Entry<R>> cached() {
        List<Entry<R>> all = new ArrayList<>();
        byStart.values().forEach(all::addAll);
        return all;
    }

    /** Acquisitions a cached entry served. */
    synchronized long hits() {
        return hits;
    }

    /** Acquisitions that had to register. */
    synchronized long misses() {
        return misses;
    }

    /** Registrations made since the cache was created (kept or not). */
    synchronized long registrations() {
        return registrations;
    }

    /** Idle entries deregistered to stay within the bounds or after a refused registration. */
    synchronized long evictions() {
        return evictions;
    }

    private Entry<R> find(long address, long end, MemorySegment.Scope scope, int access) {
        // entries start at or before the address; walking back through them is cheap next to a registration
        for (List<Entry<R>> list : byStart.headMap(address, true).descendingMap().values()) {
            for (Entry<R> e : list) {
                if (e.end >= end && e.access == access && e.scope.equals(scope) && scope.isAlive()) {
                    return e;
                }
            }
        }
        return null;
    }

    /** Evicts least recently used unheld entries until {@code need} more bytes and one more entry fit. */
    private void makeRoomFor(long need) {
        while (bytes + need > maxBytes || entries >= maxEntries) {
            if (evictUnheld(1) == 0) {
                return;
            }
        }
    }

    /** Evicts up to {@code count} least recently used entries no send holds; returns how many. */
    private int evictUnheld(long count) {
        int evicted = 0;
        while (evicted < count) {
            Entry<R> lru = null;
            for (List<Entry<R>> list : byStart.values()) {
                for (Entry<R> e : list) {
                    if (e.holds == 0 && (lru == null || e.lastUse < lru.lastUse)) {
                        lru = e;
                    }
                }
            }
            if (lru == null) {
                break;
            }
            remove(lru);
            registrar.deregister(lru.registration);
            evicted++;
            evictions++;
        }
        return evicted;
    }

    private void remove(Entry<R> e) {
        List<Entry<R>> list = byStart.get(e.start);
        if (list != null && list.remove(e)) {
            if (list.isEmpty()) {
                byStart.remove(e.start);
            }
            bytes -= e.bytes();
            entries--;
            e.cached = false;
        }
    }

    /** Whether the device refused for the locked-memory limit (ENOMEM or EPERM). */
    private static boolean isMemlock(RuntimeException cause) {
        return cause instanceof dev.rdmarpc.transport.rdma.verbs.VerbsException ve && (ve.errno() == 12 || ve.errno() == 1);
    }

    private static RuntimeException refused(RuntimeException cause, long length) {
        String why = cause.getMessage();
        if (isMemlock(cause)) {
            why += " (the locked-memory limit RLIMIT_MEMLOCK is too low to register it: raise it, e.g. ulimit -l unlimited)";
        }
        return new IllegalStateException("cannot register a " + length + "-byte attachment for RDMA: " + why, cause);
    }
}
