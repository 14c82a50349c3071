package dev.rdmarpc.core.buffer;

import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Giving memory back: {@link SlabPool#trim()} at once, and the automatic decay tick by tick. */
class SlabPoolTrimTest {
    private static final int LARGE = 4 << 20;
    private static final int BLOCK_64K = 64 << 10;
    private static final int BLOCKS_PER_SLAB_64K = SlabPool.SMALL_SLAB_SIZE / BLOCK_64K;

    @Test
    void trimFreesIdleLargeAndSmallSlabsTellsListenersAndSparesSlabsWithLiveBlocks() {
        SlabPool pool = new SlabPool(1L << 30, false, 0);
        RecordingSlabListener listener = new RecordingSlabListener();
        pool.addListener(listener);

        SlabBuffer large = pool.allocate(LARGE);
        List<SlabBuffer> small = new ArrayList<>();
        for (int i = 0; i <= BLOCKS_PER_SLAB_64K; i++) {
            small.add(pool.allocate(BLOCK_64K));
        }
        SlabBuffer kept = small.removeFirst();
        SlabBuffer ofSecondSlab = small.getLast();
        assertNotSame(kept.slab(), ofSecondSlab.slab(), "one block more than a slab holds needs a second slab");
        assertEquals(3, pool.slabCount());
        Slab keptSlab = kept.slab();
        Slab secondSlab = ofSecondSlab.slab();
        Slab largeSlab = large.slab();

        large.release();
        small.forEach(SlabBuffer::release);
        assertEquals(3, pool.slabCount(), "released blocks are kept for reuse until a trim");
        assertEquals(1, pool.inUseBuffers());

        pool.trim();

        assertTrue(listener.removed.contains(largeSlab), "the idle large block's slab is freed");
        assertTrue(listener.removed.contains(secondSlab), "the slab whose blocks are all free is freed");
        assertFalse(listener.removed.contains(keptSlab), "a slab with a block in use stays");
        assertEquals(1, pool.slabCount());
        assertEquals(SlabPool.SMALL_SLAB_SIZE, pool.reservedBytes());
        kept.segment().set(ValueLayout.JAVA_LONG, 0, 7L);
        assertEquals(7L, kept.segment().get(ValueLayout.JAVA_LONG, 0), "the live block is still usable");

        kept.release();
        pool.trim();
        assertTrue(listener.removed.contains(keptSlab));
        assertEquals(0, pool.slabCount());
        assertEquals(0, pool.reservedBytes());
        assertEquals(0, listener.registered());
        assertEquals(0, pool.inUseBuffers());
    }

    @Test
    void trimNeverFreesASlabWhoseBlocksSitInALiveThreadsCache() throws Exception {
        SlabPool pool = new SlabPool(0, false, 0);
        var cached = new java.util.concurrent.CountDownLatch(1);
        var finish = new java.util.concurrent.CountDownLatch(1);
        Thread other = Thread.ofPlatform().start(() -> {
            pool.allocate(4096).release();
            cached.countDown();
            awaitQuietly(finish);
            pool.allocate(4096).release();
        });
        cached.await();
        assertEquals(0, pool.inUseBuffers());
        assertTrue(pool.outstandingSmallBlocks() > 0, "the other thread keeps the block it released");
        pool.trim();
        assertEquals(1, pool.slabCount(), "the slab stays while a live thread caches some of its blocks");
        finish.countDown();
        other.join();
        pool.trim();
        assertEquals(0, pool.slabCount(), "once the thread has ended its cache is given back and the slab freed");
        assertEquals(0, pool.outstandingSmallBlocks());
    }

    @Test
    void decayFreesSlabsUnusedForSomeTicksAndKeepsWhatRecentLoadUses() throws Exception {
        SlabPool pool = new SlabPool(1L << 30, false, 0);
        RecordingSlabListener listener = new RecordingSlabListener();
        pool.addListener(listener);
        // this thread touches large blocks only, which no thread caches; small blocks live on threads that end
        SlabBuffer[] steadyHolder = new SlabBuffer[1];
        Thread.ofPlatform().start(() -> steadyHolder[0] = pool.allocate(4096)).join();
        SlabBuffer steady = steadyHolder[0];

        Thread burst = Thread.ofPlatform().start(() -> {
            List<SlabBuffer> held = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                held.add(pool.allocate(LARGE));
            }
            for (int i = 0; i < 3 * BLOCKS_PER_SLAB_64K; i++) {
                held.add(pool.allocate(BLOCK_64K));
            }
            held.forEach(SlabBuffer::release);
        });
        burst.join();
        assertEquals(1, pool.inUseBuffers());
        long afterBurst = pool.reservedBytes();
        assertEquals(4L * LARGE + 4L * SlabPool.SMALL_SLAB_SIZE, afterBurst);

        for (int t = 1; t < SlabPool.IDLE_TICKS; t++) {
            pool.decayTick();
            assertEquals(afterBurst, pool.reservedBytes(), "nothing is freed before it stayed unused for " + SlabPool.IDLE_TICKS + " ticks");
            pool.allocate(LARGE).release();
        }
        for (int t = 0; t < 100 && pool.reservedBytes() > LARGE + SlabPool.SMALL_SLAB_SIZE; t++) {
            pool.decayTick();
            pool.allocate(LARGE).release();
        }
        assertEquals(LARGE + SlabPool.SMALL_SLAB_SIZE, pool.reservedBytes(),
                "what the steady load uses stays (one large block, the slab of the live 4 KiB block); the rest decayed");
        assertTrue(pool.highWaterBytes() >= LARGE, "the high-water mark follows the recent peak");
        assertEquals(listener.added.size() - 2, listener.removed.size());

        Thread.ofVirtual().start(steady::release).join();
        for (int t = 0; t < 100 && pool.slabCount() > 0; t++) {
            pool.decayTick();
        }
        assertEquals(0, pool.slabCount(), "with no load at all everything goes back");
        assertEquals(0, listener.registered());
    }

    @Test
    void theDaemonTimerGivesIdleMemoryBackOnItsOwn() throws Exception {
        SlabPool pool = new SlabPool(1L << 30, false, 1);
        RecordingSlabListener listener = new RecordingSlabListener();
        pool.addListener(listener);
        Thread.ofPlatform().start(() -> {
            pool.allocate(LARGE).release();
            pool.allocate(4096).release();
        }).join();
        Await.until(() -> pool.slabCount() == 0, () -> pool.slabCount() + " slabs still held");
        assertEquals(0, pool.reservedBytes());
        assertEquals(2, listener.removed.size(), "listeners heard of both slabs before they were freed");
    }

    private static void awaitQuietly(java.util.concurrent.CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
