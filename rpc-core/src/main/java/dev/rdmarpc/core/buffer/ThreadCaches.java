package dev.rdmarpc.core.buffer;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A pool's per-thread caches: finds the calling thread's cache and keeps the list of all of them, so a
 * trim can give back the caches of threads that have ended and ask the others to flush. A thread finds
 * its cache in a small table indexed by its id (one read, checked against the cache's owner id, which is
 * never reused), or, when another thread holds that entry, in the {@link ThreadLocal} behind it (slower).
 * Virtual threads get no cache.
 */
final class ThreadCaches {
    private static final int SLOTS = 256;

    private final SmallClassStore[] stores;
    private final int cachedClasses;
    private final ThreadCache[] byThreadId = new ThreadCache[SLOTS];
    private final ThreadLocal<ThreadCache> threadLocal = new ThreadLocal<>();
    private final ConcurrentLinkedQueue<ThreadCache> all = new ConcurrentLinkedQueue<>();

    ThreadCaches(SmallClassStore[] stores, int cachedClasses) {
        this.stores = stores;
        this.cachedClasses = cachedClasses;
    }

    /** The calling thread's cache, made on first use; null on a virtual thread. */
    ThreadCache current() {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            return null;
        }
        long id = t.threadId();
        int slot = (int) id & (SLOTS - 1);
        ThreadCache cache = byThreadId[slot];
        if (cache != null && cache.ownerId == id) {
            return cache;
        }
        cache = threadLocal.get();
        if (cache == null) {
            cache = new ThreadCache(stores, cachedClasses, t);
            threadLocal.set(cache);
            all.add(cache);
        }
        if (byThreadId[slot] == null) { // the first thread to come keeps the entry until it ends: no tug of war
            byThreadId[slot] = cache;
        }
        return cache;
    }

    /** The calling thread's cache if it has one (never makes one). */
    ThreadCache currentIfAny() {
        Thread t = Thread.currentThread();
        return t.isVirtual() ? null : threadLocal.get();
    }

    /** Gives back the blocks of every cache whose thread has ended, and forgets those caches. */
    void flushEnded() {
        all.removeIf(cache -> {
            if (!cache.flushIfOwnerEnded()) {
                return false;
            }
            int slot = (int) cache.ownerId & (SLOTS - 1);
            if (byThreadId[slot] == cache) {
                byThreadId[slot] = null; // a hint only: a thread that raced to this slot finds its cache again
            }
            return true;
        });
    }

    /** Asks every live thread to give its cached blocks back the next time it goes to a shared store. */
    void requestFlushOfAll() {
        for (ThreadCache cache : all) {
            cache.requestFlush();
        }
    }
}
