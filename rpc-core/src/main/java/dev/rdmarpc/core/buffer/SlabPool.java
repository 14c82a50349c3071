package dev.rdmarpc.core.buffer;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap, page-aligned buffers in power-of-two size classes from {@link #MIN_BLOCK}. Blocks up to
 * {@link #MAX_SMALL} are carved from shared slabs of {@link #SMALL_SLAB_SIZE}, one size class per slab;
 * larger ones get a slab each, kept for reuse up to a byte budget.
 *
 * <p>Allocating and releasing take no lock for blocks up to 64 KiB: each platform thread
 * keeps a small bounded cache per size class and exchanges half of it at a time with the class's shared
 * store when it runs empty or full, so a block released on another thread than the one that allocated
 * it flows back through the shared store. Virtual threads have no cache and use the shared stores.
 *
 * <p>Memory not used goes back to the system: {@link #trim()} frees, at once, every slab none of whose
 * blocks is in use or in a live thread's cache, and a daemon timer frees slabs that stayed unused for a
 * few ticks whenever the pool holds more than a high-water mark of recent use, which decays each tick.
 * Listeners hear of each slab before it is freed.
 *
 * <p>Counts every block in use so tests can check for leaks; with {@code -Drdmarpc.slab.trackLeaks=true}
 * it also remembers where each live block was allocated.
 */
public final class SlabPool {
    /** Alignment of every slab. */
    public static final int PAGE_SIZE = 4096;
    /** Smallest block (a 16-byte control frame takes one); every block is aligned to its own size. */
    public static final int MIN_BLOCK = 64;
    /** Largest block carved from a shared slab. */
    public static final int MAX_SMALL = 1 << 20;
    /** Size of a shared slab. */
    public static final int SMALL_SLAB_SIZE = 4 << 20;
    /** Largest block the pool will hand out. */
    public static final int MAX_BLOCK = 1 << 30;
    /** Largest block a thread keeps in its cache; larger ones go straight to the shared stores. */
    static final int MAX_CACHED = 64 << 10;

    /** Ticks a slab must stay unused before the automatic decay frees it. */
    static final int IDLE_TICKS = 5;
    /** Time between two ticks of the automatic decay, unless a pool is given its own. */
    static final long DEFAULT_TRIM_INTERVAL_MILLIS = Long.getLong("rdmarpc.slab.trimIntervalMillis", 1000L);

    private static final int MIN_SHIFT = Integer.numberOfTrailingZeros(MIN_BLOCK);
    static final int MAX_SMALL_CLASS = Integer.numberOfTrailingZeros(MAX_SMALL) - MIN_SHIFT;
    static final int MAX_CACHED_CLASS = Integer.numberOfTrailingZeros(MAX_CACHED) - MIN_SHIFT;
    static final int CLASS_COUNT = Integer.numberOfTrailingZeros(MAX_BLOCK) - MIN_SHIFT + 1;

    private static final SlabPool SHARED = new SlabPool(256L << 20,
            Boolean.getBoolean("rdmarpc.slab.trackLeaks"));

    private final SmallClassStore[] stores;
    private final LargeBlockCache large;
    private final ThreadCaches threadCaches;
    private final Object slabLock = new Object();
    private final Set<Slab> slabs = new LinkedHashSet<>();
    private final CopyOnWriteArrayList<SlabListener> listeners = new CopyOnWriteArrayList<>();
    private volatile long reservedBytes;
    private final AtomicLong inUseBuffers = new AtomicLong();
    private final AtomicLong inUseBytes = new AtomicLong();
    private final AtomicLong peakInUseBytes = new AtomicLong();
    private final Object decayLock = new Object();
    private volatile int tick;
    private long highWaterBytes;
    private final boolean trackLeaks;
    private final Set<SlabBuffer> live;

    /**
     * A pool keeping at most maxCachedLargeBytes of freed large blocks for reuse, trimmed automatically
     * every second (system property {@code rdmarpc.slab.trimIntervalMillis}; 0 turns it off).
     */
    public SlabPool(long maxCachedLargeBytes, boolean trackLeaks) {
        this(maxCachedLargeBytes, trackLeaks, DEFAULT_TRIM_INTERVAL_MILLIS);
    }

    /**
     * A pool keeping at most maxCachedLargeBytes of freed large blocks for reuse, whose memory decays
     * every {@code trimIntervalMillis} (0: never on its own, only when {@link #trim()} is called).
     */
    public SlabPool(long maxCachedLargeBytes, boolean trackLeaks, long trimIntervalMillis) {
        if (trimIntervalMillis < 0) {
            throw new IllegalArgumentException("trim interval " + trimIntervalMillis + " ms is negative");
        }
        this.trackLeaks = trackLeaks;
        this.live = trackLeaks ? ConcurrentHashMap.newKeySet() : null;
        this.stores = new SmallClassStore[MAX_SMALL_CLASS + 1];
        for (int c = 0; c <= MAX_SMALL_CLASS; c++) {
            stores[c] = new SmallClassStore(this, c);
        }
        this.threadCaches = new ThreadCaches(stores, MAX_CACHED_CLASS + 1);
        this.large = new LargeBlockCache(MAX_SMALL_CLASS + 1, CLASS_COUNT, maxCachedLargeBytes);
        if (trimIntervalMillis > 0) {
            SlabTrimmer.schedule(this, trimIntervalMillis);
        }
    }

    /** The process-wide pool every transport and call uses unless told otherwise. */
    public static SlabPool shared() {
        return SHARED;
    }

    /** The size class index for a request of {@code size} bytes. */
    static int classOf(int size) {
        if (size <= MIN_BLOCK) {
            return 0;
        }
        return 32 - Integer.numberOfLeadingZeros(size - 1) - MIN_SHIFT;
    }

    /** The block size of size class {@code sizeClass}. */
    static int classSize(int sizeClass) {
        return MIN_BLOCK << sizeClass;
    }

    /**
     * A buffer of {@code size} bytes, length 0, reference count 1, placed {@code frontRoom} bytes into a block of its
     * own: those bytes are its {@link SlabBuffer#frontRoom()}, for its holder to {@link SlabBuffer#prepend} into.
     */
    public SlabBuffer allocate(int size, int frontRoom) {
        if (frontRoom < 0 || size < 0 || (long) size + frontRoom > MAX_BLOCK) {
            throw new IllegalArgumentException("size " + size + " with front room " + frontRoom + " is not supported");
        }
        SlabBuffer block = allocate(size + frontRoom);
        SlabBuffer buffer = block.retainedSliceWithFrontRoom(frontRoom, size);
        block.release();
        return buffer.setLength(0);
    }

    /** A buffer of at least {@code size} bytes, length 0, reference count 1. */
    public SlabBuffer allocate(int size) {
        if (size < 0 || size > MAX_BLOCK) {
            throw new IllegalArgumentException("slab buffer size " + size + " outside [0, " + MAX_BLOCK + "]");
        }
        int c = classOf(size);
        SlabBuffer b;
        if (c <= MAX_CACHED_CLASS) {
            ThreadCache cache = threadCaches.current();
            b = cache != null ? cache.allocate(c) : stores[c].takeOne();
        } else if (c <= MAX_SMALL_CLASS) {
            b = stores[c].takeOne();
        } else {
            b = large.take(c);
            if (b == null) {
                Slab slab = newSlab(classSize(c));
                b = new SlabBuffer(this, slab, slab.segment(), c, null);
            }
        }
        b.onAllocate();
        inUseBuffers.incrementAndGet();
        long bytes = inUseBytes.addAndGet(b.capacity());
        if (bytes > peakInUseBytes.get()) {
            raisePeak(bytes);
        }
        if (trackLeaks) {
            b.allocationSite = new Throwable("slab buffer of " + b.capacity() + " bytes allocated here");
            live.add(b);
        }
        return b;
    }

    private void raisePeak(long bytes) {
        long peak;
        do {
            peak = peakInUseBytes.get();
        } while (bytes > peak && !peakInUseBytes.compareAndSet(peak, bytes));
    }

    void recycle(SlabBuffer b) {
        int capacity = b.capacity();
        inUseBuffers.decrementAndGet();
        inUseBytes.addAndGet(-capacity);
        if (trackLeaks) {
            live.remove(b);
            b.allocationSite = null;
        }
        int c = b.sizeClass();
        if (c <= MAX_CACHED_CLASS) {
            ThreadCache cache = threadCaches.current();
            if (cache != null) {
                cache.release(b, c);
            } else {
                stores[c].giveOne(b);
            }
        } else if (c <= MAX_SMALL_CLASS) {
            stores[c].giveOne(b);
        } else if (!large.offer(b, tick)) {
            removeSlab(b.slab());
        }
    }

    /** Makes a slab and tells the listeners; may run under a small store's lock (never the other way round). */
    Slab newSlab(long size) {
        Slab slab = new Slab(size);
        synchronized (slabLock) {
            slabs.add(slab);
            reservedBytes += size;
            for (SlabListener l : listeners) {
                l.onSlabAdded(slab);
            }
        }
        return slab;
    }

    private void removeSlab(Slab slab) {
        synchronized (slabLock) {
            slabs.remove(slab);
            reservedBytes -= slab.size();
            for (SlabListener l : listeners) {
                l.onSlabRemoved(slab);
            }
        }
        slab.free();
    }

    /** The current tick of the automatic decay. */
    int currentTick() {
        return tick;
    }

    /**
     * Frees now every slab that no block in use and no live thread's cache holds a block of: freed large
     * blocks kept for reuse, and shared slabs whose blocks are all free. Gives the calling thread's cached
     * blocks back first, and those of threads that have ended; other live threads are asked to give theirs
     * back the next time they refill or empty a cache stack, for a later trim. Listeners hear of each slab
     * before it is freed.
     */
    public void trim() {
        ThreadCache own = threadCaches.currentIfAny();
        if (own != null) {
            own.flush();
        }
        flushEndedThreadsAndAskTheOthers();
        freeIdle(tick, Long.MAX_VALUE);
    }

    /**
     * One tick of the automatic decay: the high-water mark of bytes in use falls a quarter (and a page)
     * towards the peak of the last tick; while the pool holds more than it, slabs unused for
     * {@link #IDLE_TICKS} ticks are freed, never below the mark.
     */
    void decayTick() {
        synchronized (decayLock) {
            int now = tick + 1;
            tick = now;
            long peak = peakInUseBytes.getAndSet(inUseBytes.get());
            highWaterBytes = Math.max(peak, highWaterBytes - (highWaterBytes >>> 2) - PAGE_SIZE);
            long excess = reservedBytes - highWaterBytes;
            if (excess > 0) {
                flushEndedThreadsAndAskTheOthers();
                freeIdle(now - IDLE_TICKS, excess);
            } else {
                flushEndedThreads();
            }
        }
    }

    /** The high-water mark the automatic decay keeps (for tests). */
    long highWaterBytes() {
        synchronized (decayLock) {
            return highWaterBytes;
        }
    }

    private void flushEndedThreads() {
        threadCaches.flushEnded();
    }

    private void flushEndedThreadsAndAskTheOthers() {
        threadCaches.flushEnded();
        threadCaches.requestFlushOfAll();
    }

    private void freeIdle(int idleSinceTick, long maxBytes) {
        List<Slab> victims = new ArrayList<>();
        long left = maxBytes - large.removeIdle(idleSinceTick, maxBytes, victims);
        for (int c = MAX_SMALL_CLASS; c >= 0 && left >= SMALL_SLAB_SIZE; c--) {
            left -= stores[c].removeIdle(idleSinceTick, left, victims);
        }
        for (Slab s : victims) {
            removeSlab(s);
        }
    }

    /** Blocks of shared slabs that are out of the shared stores: in use or in thread caches (for tests). */
    long outstandingSmallBlocks() {
        long sum = 0;
        for (SmallClassStore s : stores) {
            sum += s.outstanding();
        }
        return sum;
    }

    /** Adds a listener and tells it of every slab that exists now. */
    public void addListener(SlabListener l) {
        synchronized (slabLock) {
            listeners.add(l);
            for (Slab s : slabs) {
                l.onSlabAdded(s);
            }
        }
    }

    /** Removes a listener, telling it of every slab as removed. */
    public void removeListener(SlabListener l) {
        synchronized (slabLock) {
            if (listeners.remove(l)) {
                for (Slab s : slabs) {
                    l.onSlabRemoved(s);
                }
            }
        }
    }

    /** Blocks handed out and not yet released. */
    public long inUseBuffers() {
        return inUseBuffers.get();
    }

    /** Bytes of the blocks handed out and not yet released (one volatile read). */
    public long inUseBytes() {
        return inUseBytes.get();
    }

    /**
     * The most bytes in use at once since the last trim tick, or since the pool was made when it trims only when
     * asked (a trim interval of 0).
     */
    public long peakInUseBytes() {
        return peakInUseBytes.get();
    }

    /** Bytes of all slabs the pool holds. */
    public long reservedBytes() {
        return reservedBytes;
    }

    /** Number of slabs the pool holds. */
    public int slabCount() {
        synchronized (slabLock) {
            return slabs.size();
        }
    }

    /** Where the blocks now in use were allocated (needs leak tracking on), for test failure messages. */
    public String describeLiveBuffers() {
        if (!trackLeaks) {
            return inUseBuffers() + " buffers in use (run with -Drdmarpc.slab.trackLeaks=true to see where they were allocated)";
        }
        StringWriter out = new StringWriter();
        PrintWriter pw = new PrintWriter(out);
        pw.println(live.size() + " buffers in use:");
        int shown = 0;
        for (SlabBuffer b : live) {
            if (shown++ == 5) {
                pw.println("...");
                break;
            }
            Throwable site = b.allocationSite;
            if (site != null) {
                site.printStackTrace(pw);
            }
        }
        pw.flush();
        return out.toString();
    }
}
