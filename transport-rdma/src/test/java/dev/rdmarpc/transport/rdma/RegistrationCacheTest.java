package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The registration cache's logic with a fake registrar: hits, page rounding, bounds, LRU, invalidation, memlock. */
class RegistrationCacheTest {
    /** A fake registration: the range it covers, and a serial number (two caches may register the same range). */
    record Fake(long start, long length, int access, int serial) {
    }

    /** Counts live registrations; refuses (as ENOMEM, RLIMIT_MEMLOCK) past a budget of pinned bytes. */
    static final class FakeRegistrar implements RegistrationCache.Registrar<Fake> {
        final Set<Fake> live = new HashSet<>();
        long pinned;
        long budget = Long.MAX_VALUE;
        int registrations;

        @Override
        public Fake register(MemorySegment memory, int access) {
            if (pinned + memory.byteSize() > budget) {
                throw new VerbsException("ibv_reg_mr", 12);
            }
            Fake f = new Fake(memory.address(), memory.byteSize(), access, registrations);
            assertTrue(live.add(f), "registered twice: " + f);
            pinned += f.length();
            registrations++;
            return f;
        }

        @Override
        public void deregister(Fake registration) {
            assertTrue(live.remove(registration), "deregistered twice or never registered: " + registration);
            pinned -= registration.length();
        }
    }

    private final FakeRegistrar registrar = new FakeRegistrar();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        arena.close();
    }

    private RegistrationCache<Fake> cache(long maxBytes, int maxEntries) {
        return new RegistrationCache<>(registrar, maxBytes, maxEntries, AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND, false);
    }

    @Test
    void aRangeInsideARegisteredOneHitsAndRegistrationsCoverWholePages() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment slab = arena.allocate(1 << 20, 4096);
        var e = c.acquire(slab.asSlice(100, 50_000));
        assertEquals(0, e.start % 4096);
        assertTrue(e.start <= slab.address() + 100 && e.end >= slab.address() + 50_100);
        assertEquals(0, e.end % 4096);
        var again = c.acquire(slab.asSlice(200, 1000));
        assertSame(e, again, "a range inside the entry hits it");
        assertEquals(1, registrar.registrations);
        assertEquals(1, c.hits());
        c.release(e);
        c.release(again);
        assertEquals(1, c.entries(), "kept for reuse");
        var outside = c.acquire(slab.asSlice(900_000, 1000));
        assertNotSame(e, outside);
        c.release(outside);
        assertEquals(2, c.entries());
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void theSameAddressInAnotherArenaNeverHitsAnOldEntry() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment first;
        try (Arena a = Arena.ofShared()) {
            first = a.allocate(8192, 4096);
            c.release(c.acquire(first));
        }
        // whatever address the next arena gets, the closed one's entry cannot serve it, and a miss sweeps it out
        try (Arena b = Arena.ofShared()) {
            MemorySegment reused = MemorySegment.ofAddress(first.address()).reinterpret(8192, b, null);
            var e = c.acquire(reused);
            assertEquals(1, c.entries(), "the dead entry was deregistered on the miss");
            assertEquals(1, registrar.live.size());
            c.release(e);
        }
        assertEquals(1, c.sweep(), "the second arena's entry goes once it is closed");
        assertEquals(0, registrar.live.size());
    }

    @Test
    void boundedByBytesAndEntriesEvictingTheLeastRecentlyUsed() {
        RegistrationCache<Fake> c = cache(3 * 65536, 8);
        MemorySegment[] s = new MemorySegment[4];
        for (int i = 0; i < 4; i++) {
            s[i] = arena.allocate(65536, 4096);
        }
        c.release(c.acquire(s[0]));
        c.release(c.acquire(s[1]));
        c.release(c.acquire(s[2]));
        c.release(c.acquire(s[0])); // s[0] used again: s[1] is now the least recently used
        c.release(c.acquire(s[3]));
        assertEquals(3, c.entries());
        assertTrue(c.bytes() <= 3 * 65536);
        int before = registrar.registrations;
        c.release(c.acquire(s[0]));
        c.release(c.acquire(s[2]));
        assertEquals(before, registrar.registrations, "s[0] and s[2] stayed");
        c.release(c.acquire(s[1]));
        assertEquals(before + 1, registrar.registrations, "s[1] was the one evicted");

        RegistrationCache<Fake> few = cache(1 << 30, 2);
        for (MemorySegment m : s) {
            few.release(few.acquire(m));
        }
        assertEquals(2, few.entries());
        c.clear();
        few.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void heldEntriesAreNeverEvictedAndARegistrationOverTheBoundsIsDroppedOnRelease() {
        RegistrationCache<Fake> c = cache(65536, 8);
        MemorySegment a = arena.allocate(65536, 4096);
        MemorySegment b = arena.allocate(65536, 4096);
        var held = c.acquire(a);
        var over = c.acquire(b);
        assertTrue(held.cached);
        assertFalse(over.cached, "no room while the other is held");
        c.release(over);
        assertEquals(1, registrar.live.size(), "the uncached one is deregistered at once");
        c.release(held);
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void invalidationDeregistersOverlappingEntriesAtOnceOrWhenReleased() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment m = arena.allocate(1 << 20, 4096);
        var idle = c.acquire(m.asSlice(0, 4096));
        c.release(idle);
        var busy = c.acquire(m.asSlice(512 * 1024, 4096));
        var elsewhere = c.acquire(arena.allocate(4096, 4096));
        c.release(elsewhere);
        assertEquals(1, c.invalidate(m.address(), m.byteSize()), "one entry is still held");
        assertEquals(2, registrar.live.size(), "the idle one is gone, the held one and the other remain");
        c.release(busy);
        assertEquals(1, registrar.live.size(), "the held one went with its release");
        assertEquals(1, c.entries());
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void aMemlockRefusalEvictsIdleEntriesRetriesAndNamesTheLimit() {
        RegistrationCache<Fake> c = cache(1 << 30, 16);
        MemorySegment a = arena.allocate(65536, 4096);
        MemorySegment b = arena.allocate(65536, 4096);
        MemorySegment big = arena.allocate(4 * 65536, 4096);
        registrar.budget = 65536 * 3 / 2;
        c.release(c.acquire(a));
        var e = c.acquire(b); // fits only once a's idle entry is evicted
        assertEquals(1, registrar.live.size());
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> c.acquire(big));
        assertTrue(refused.getMessage().contains("RLIMIT_MEMLOCK"), refused.getMessage());
        c.release(e);
        c.clear();
        assertEquals(0, registrar.live.size());
    }

    @Test
    void onDemandPagingAddsTheFlag() {
        var odp = new RegistrationCache<>(registrar, 1 << 20, 4, AccessFlags.LOCAL_WRITE, true);
        var e = odp.acquire(arena.allocate(4096, 4096));
        assertEquals(AccessFlags.LOCAL_WRITE | AccessFlags.ON_DEMAND, e.registration().access());
        odp.release(e);
        odp.clear();
    }
}
