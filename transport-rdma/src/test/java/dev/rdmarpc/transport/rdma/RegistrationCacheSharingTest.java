package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.transport.rdma.RegistrationCacheTest.Fake;
import dev.rdmarpc.transport.rdma.RegistrationCacheTest.FakeRegistrar;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The registration cache as a device shares it between connections (fake registrar): one registration serves every
 * user of the same memory, concurrent users on several threads, read-only memory cached under its own access, the
 * counters, and invalidation of a range whatever its length.
 */
class RegistrationCacheSharingTest {
    private static final int MW_BIND = AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND;

    private final FakeRegistrar registrar = new FakeRegistrar();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        arena.close();
    }

    private RegistrationCache<Fake> cache(long maxBytes, int maxEntries) {
        return new RegistrationCache<>(registrar, maxBytes, maxEntries, MW_BIND, false);
    }

    @Test
    void twoUsersOfOneMappingShareOneRegistration() throws Exception {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment file = arena.allocate(1 << 20, 4096);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            var first = c.acquire(file);
            var second = other.submit(() -> c.acquire(file)).get(30, TimeUnit.SECONDS);
            assertSame(first, second, "the second user hits the first one's registration");
            assertEquals(2, first.holds);
            assertEquals(1, c.registrations());
            assertEquals(1, c.misses());
            assertEquals(1, c.hits());
            c.release(first);
            other.submit(() -> c.release(second)).get(30, TimeUnit.SECONDS);
            assertEquals(1, c.entries(), "kept for the next user");
            assertEquals(1, registrar.live.size());
        } finally {
            other.shutdownNow();
        }
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void usersOnSeveralThreadsKeepTheCacheConsistent() throws Exception {
        // small bounds, so that evictions race with hits and misses
        RegistrationCache<Fake> c = cache(6 * 65536, 4);
        List<MemorySegment> ranges = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            ranges.add(arena.allocate(65536, 4096));
        }
        int threads = 4;
        int rounds = 2000;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        MemorySegment m = ranges.get((r * 7 + seed * 3) % ranges.size());
                        var a = c.acquire(m.asSlice(r % 4096, 1000));
                        var b = c.acquire(m.asSlice(8192, 4096));
                        assertTrue(a.holds > 0 && b.holds > 0, "held entries stay held");
                        assertTrue(a.start <= m.address() && b.end >= m.address() + 8192 + 4096);
                        c.release(b);
                        c.release(a);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(c.entries() <= 4 && c.bytes() <= 6 * 65536, "within bounds: " + c.entries() + " entries, " + c.bytes() + " B");
        assertEquals(c.entries(), registrar.live.size(), "every registration not cached was deregistered");
        assertEquals(2L * threads * rounds, c.hits() + c.misses());
        assertEquals(c.misses(), c.registrations());
        assertTrue(c.evictions() > 0, "the bounds evicted: " + c.evictions());
        for (var e : c.cached()) {
            assertEquals(0, e.holds, "nothing left held");
        }
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void readOnlyMemoryIsCachedUnderItsOwnAccess() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment file = arena.allocate(1 << 20, 4096).asReadOnly();
        var chunk = c.acquire(file, AccessFlags.REMOTE_READ);
        assertEquals(AccessFlags.REMOTE_READ, chunk.registration().access());
        c.release(chunk);
        for (int i = 0; i < 8; i++) {
            var again = c.acquire(file.asSlice(i * 65536L, 65536), AccessFlags.REMOTE_READ);
            assertSame(chunk, again, "chunk " + i + " of the read-only mapping hits its registration");
            c.release(again);
        }
        assertEquals(1, c.registrations());
        var windowed = c.acquire(file);
        assertNotSame(chunk, windowed, "a registration with other access is another entry");
        assertEquals(MW_BIND, windowed.registration().access());
        c.release(windowed);
        assertEquals(2, c.entries());
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void invalidationOfAnyLengthIsSafeAndStopsLaterHits() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment m = arena.allocate(65536, 4096);
        c.release(c.acquire(m));
        assertEquals(0, c.invalidate(m.address() + 100, Long.MAX_VALUE), "to the end of the address space");
        assertEquals(0, c.entries());
        c.release(c.acquire(m));
        assertEquals(2, c.registrations(), "registered again after the invalidation");
        c.clear();
        assertEquals(0, registrar.live.size());
    }
}
