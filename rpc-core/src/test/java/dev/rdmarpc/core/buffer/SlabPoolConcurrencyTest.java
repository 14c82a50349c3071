package dev.rdmarpc.core.buffer;

import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Thread caches: blocks released on other threads than their allocators', threads that end, virtual threads. */
class SlabPoolConcurrencyTest {
    private static final int[] SIZES = {16, 100, 300, 4096, 9000, 65536, 200_000, 3 << 20};
    /** Tells a consumer its producer is done (the queue holds one-element arrays, so it can carry null). */
    private static final SlabBuffer END = null;

    @Test
    void blocksReleasedOnOtherThreadsFlowBackAndAccountingStaysExact() throws Exception {
        SlabPool pool = new SlabPool(1L << 30, true, 0);
        RecordingSlabListener listener = new RecordingSlabListener();
        pool.addListener(listener);
        int pairs = 3;
        int perProducer = 20_000;
        Set<SlabBuffer> handedOut = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < pairs; p++) {
            BlockingQueue<SlabBuffer[]> queue = new ArrayBlockingQueue<>(32);
            int producerId = p;
            threads.add(Thread.ofPlatform().name("producer-" + p).unstarted(guard(failure, () -> {
                try {
                    for (int i = 0; i < perProducer; i++) {
                        SlabBuffer b = pool.allocate(SIZES[(i + producerId) % SIZES.length]);
                        assertTrue(handedOut.add(b), "a block is handed out to one owner at a time");
                        b.segment().set(ValueLayout.JAVA_INT, 0, i);
                        if (i % 5 == 0) { // some released where they were allocated
                            handedOut.remove(b);
                            b.release();
                        } else {
                            queue.put(new SlabBuffer[] {b});
                        }
                    }
                } finally {
                    queue.put(new SlabBuffer[] {END});
                }
            })));
            threads.add(Thread.ofPlatform().name("consumer-" + p).unstarted(guard(failure, () -> {
                while (true) {
                    SlabBuffer b = queue.take()[0];
                    if (b == null) {
                        return;
                    }
                    handedOut.remove(b);
                    b.release();
                }
            })));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        assertNull(failure.get(), () -> "a worker failed: " + failure.get());
        assertTrue(listener.added.size() > 1, "the workers made the pool grow");

        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
        assertEquals(0, pool.inUseBytes());
        pool.trim();
        assertEquals(0, pool.outstandingSmallBlocks(), "no block is stranded in the caches of the threads that ended");
        assertEquals(0, pool.slabCount(), "every slab is idle and freed");
        assertEquals(0, pool.reservedBytes());
        assertEquals(0, listener.registered(), "listeners heard of every slab freed");
    }

    @Test
    void aThreadThatEndsDoesNotStrandItsCachedBlocks() throws Exception {
        SlabPool pool = new SlabPool(0, false, 0);
        SlabBuffer mine = pool.allocate(4096);
        Thread worker = Thread.ofPlatform().start(() -> {
            List<SlabBuffer> held = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                held.add(pool.allocate(4096));
            }
            held.forEach(SlabBuffer::release);
        });
        worker.join();
        assertEquals(1, pool.inUseBuffers());
        assertTrue(pool.outstandingSmallBlocks() > 1, "before a trim the ended thread's cache still holds blocks");

        pool.trim();
        assertEquals(1, pool.outstandingSmallBlocks(), "after a trim only the block in use is out of the shared store");
        assertEquals(1, pool.slabCount(), "the slab of the live block stays");

        Thread reuser = Thread.ofPlatform().start(() -> pool.allocate(4096).release());
        reuser.join();
        assertEquals(1, pool.slabCount(), "the given-back blocks are reused, no new slab");
        mine.release();
        pool.trim();
        assertEquals(0, pool.slabCount());
    }

    @Test
    void moreLiveThreadsThanCacheTableEntriesEachUseTheirOwnCache() throws Exception {
        SlabPool pool = new SlabPool(0, false, 0);
        int threads = 300; // more than the table of caches by thread id has entries: some threads share an entry
        CountDownLatch allHold = new CountDownLatch(threads);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            started.add(Thread.ofPlatform().start(guard(failure, () -> {
                List<SlabBuffer> held = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    held.add(pool.allocate(64));
                }
                allHold.countDown();
                release.await();
                held.forEach(SlabBuffer::release);
                pool.allocate(64).release();
            })));
        }
        allHold.await();
        assertEquals(3L * threads, pool.inUseBuffers());
        release.countDown();
        for (Thread t : started) {
            t.join();
        }
        assertNull(failure.get(), () -> "a worker failed: " + failure.get());
        assertEquals(0, pool.inUseBuffers());
        pool.trim();
        assertEquals(0, pool.outstandingSmallBlocks(), "every thread's cache came back");
        assertEquals(0, pool.slabCount());
    }

    @Test
    void virtualThreadsKeepNoCache() throws Exception {
        SlabPool pool = new SlabPool(0, false, 0);
        Thread v = Thread.ofVirtual().start(() -> {
            SlabBuffer a = pool.allocate(16);
            SlabBuffer b = pool.allocate(4096);
            a.release();
            b.release();
        });
        v.join();
        assertEquals(0, pool.inUseBuffers());
        assertEquals(0, pool.outstandingSmallBlocks(), "a virtual thread gives blocks straight back to the shared store");
    }

    @Test
    void leakTrackingReportsBlocksStillLiveAfterCrossThreadRelease() throws Exception {
        SlabPool pool = new SlabPool(0, true, 0);
        SlabBuffer released = pool.allocate(16);
        SlabBuffer leaked = leakOne(pool);
        CountDownLatch done = new CountDownLatch(1);
        Thread.ofPlatform().start(() -> {
            released.release();
            done.countDown();
        });
        done.await();
        assertEquals(1, pool.inUseBuffers());
        String report = pool.describeLiveBuffers();
        assertTrue(report.startsWith("1 buffers in use"), report);
        assertTrue(report.contains("leakOne"), report);
        leaked.release();
        assertEquals(0, pool.inUseBuffers());
    }

    private static SlabBuffer leakOne(SlabPool pool) {
        return pool.allocate(16);
    }

    private interface Work {
        void run() throws Exception;
    }

    private static Runnable guard(AtomicReference<Throwable> failure, Work work) {
        return () -> {
            try {
                work.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        };
    }
}
