package dev.rdmarpc.core.buffer;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap, page-aligned buffers in power-of-two size classes. Blocks up to {@link #MAX_SMALL}
 * are carved from shared slabs of {@link #SMALL_SLAB_SIZE}; larger ones get a slab each, kept for
 * reuse up to a byte budget. Counts every block in use so tests can check for leaks; with
 * {@code -Drdmarpc.slab.trackLeaks=true} it also remembers where each live block was allocated.
 */
public final class SlabPool {
    public static final int PAGE_SIZE = 4096;
    /** Smallest block. */
    public static final int MIN_BLOCK = 256;
    /** Largest block carved from a shared slab. */
    public static final int MAX_SMALL = 1 << 20;
    /** Size of a shared slab. */
    public static final int SMALL_SLAB_SIZE = 4 << 20;
    /** Largest block the pool will hand out. */
    public static final int MAX_BLOCK = 1 << 30;

    private static final int MIN_SHIFT = Integer.numberOfTrailingZeros(MIN_BLOCK);
    private static final int MAX_SMALL_CLASS = Integer.numberOfTrailingZeros(MAX_SMALL) - MIN_SHIFT;
    private static final int CLASS_COUNT = Integer.numberOfTrailingZeros(MAX_BLOCK) - MIN_SHIFT + 1;

    private static final SlabPool SHARED = new SlabPool(256L << 20,
            Boolean.getBoolean("rdmarpc.slab.trackLeaks"));

    private final ArrayDeque<SlabBuffer>[] free;
    private final List<Slab> slabs = new ArrayList<>();
    private final CopyOnWriteArrayList<SlabListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong inUseBuffers = new AtomicLong();
    private final AtomicLong inUseBytes = new AtomicLong();
    private final long maxCachedLargeBytes;
    private long cachedLargeBytes;
    private final boolean trackLeaks;
    private final Set<SlabBuffer> live;

    /** A pool keeping at most maxCachedLargeBytes of freed large blocks for reuse. */
    @SuppressWarnings("unchecked")
    public SlabPool(long maxCachedLargeBytes, boolean trackLeaks) {
        this.maxCachedLargeBytes = maxCachedLargeBytes;
        this.trackLeaks = trackLeaks;
        this.live = trackLeaks ? ConcurrentHashMap.newKeySet() : null;
        this.free = new ArrayDeque[CLASS_COUNT];
        for (int i = 0; i < CLASS_COUNT; i++) {
            free[i] = new ArrayDeque<>();
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

    static int classSize(int sizeClass) {
        return MIN_BLOCK << sizeClass;
    }

    /** A buffer of at least {@code size} bytes, length 0, reference count 1. */
    public SlabBuffer allocate(int size) {
        if (size < 0 || size > MAX_BLOCK) {
            throw new IllegalArgumentException("slab buffer size " + size + " outside [0, " + MAX_BLOCK + "]");
        }
        int c = classOf(size);
        SlabBuffer b;
        ArrayDeque<SlabBuffer> q = free[c];
        synchronized (q) {
            b = q.pollLast();
        }
        if (b == null) {
            b = grow(c);
        } else if (c > MAX_SMALL_CLASS) {
            synchronized (this) {
                cachedLargeBytes -= classSize(c);
            }
        }
        b.onAllocate();
        inUseBuffers.incrementAndGet();
        inUseBytes.addAndGet(b.capacity());
        if (trackLeaks) {
            b.allocationSite = new Throwable("slab buffer of " + b.capacity() + " bytes allocated here");
            live.add(b);
        }
        return b;
    }

    private SlabBuffer grow(int c) {
        int blockSize = classSize(c);
        if (c > MAX_SMALL_CLASS) {
            Slab slab = newSlab(blockSize);
            return new SlabBuffer(this, slab, slab.segment(), c);
        }
        Slab slab = newSlab(SMALL_SLAB_SIZE);
        int count = SMALL_SLAB_SIZE / blockSize;
        SlabBuffer first = new SlabBuffer(this, slab, slab.segment().asSlice(0, blockSize), c);
        ArrayDeque<SlabBuffer> q = free[c];
        synchronized (q) {
            for (int i = count - 1; i >= 1; i--) {
                q.addLast(new SlabBuffer(this, slab, slab.segment().asSlice((long) i * blockSize, blockSize), c));
            }
        }
        return first;
    }

    private Slab newSlab(long size) {
        Slab slab = new Slab(size);
        synchronized (this) {
            slabs.add(slab);
            for (SlabListener l : listeners) {
                l.onSlabAdded(slab);
            }
        }
        return slab;
    }

    void recycle(SlabBuffer b) {
        inUseBuffers.decrementAndGet();
        inUseBytes.addAndGet(-b.capacity());
        if (trackLeaks) {
            live.remove(b);
            b.allocationSite = null;
        }
        int c = b.sizeClass();
        if (c > MAX_SMALL_CLASS) {
            synchronized (this) {
                if (cachedLargeBytes + b.capacity() > maxCachedLargeBytes) {
                    slabs.remove(b.slab());
                    for (SlabListener l : listeners) {
                        l.onSlabRemoved(b.slab());
                    }
                    b.slab().free();
                    return;
                }
                cachedLargeBytes += b.capacity();
            }
        }
        ArrayDeque<SlabBuffer> q = free[c];
        synchronized (q) {
            q.addLast(b);
        }
    }

    /** Adds a listener and tells it of every slab that exists now. */
    public synchronized void addListener(SlabListener l) {
        listeners.add(l);
        for (Slab s : slabs) {
            l.onSlabAdded(s);
        }
    }

    /** Removes a listener, telling it of every slab as removed. */
    public synchronized void removeListener(SlabListener l) {
        if (listeners.remove(l)) {
            for (Slab s : slabs) {
                l.onSlabRemoved(s);
            }
        }
    }

    /** Blocks handed out and not yet released. */
    public long inUseBuffers() {
        return inUseBuffers.get();
    }

    /** Bytes of the blocks handed out and not yet released. */
    public long inUseBytes() {
        return inUseBytes.get();
    }

    /** Bytes of all slabs the pool holds. */
    public synchronized long reservedBytes() {
        long sum = 0;
        for (Slab s : slabs) {
            sum += s.size();
        }
        return sum;
    }

    /** Number of slabs the pool holds. */
    public synchronized int slabCount() {
        return slabs.size();
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
