package dev.rdmarpc.core.internal.exec;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The default callback executor: runs leave the handing-off thread, and blocked runs never starve the others. */
class CallbackExecutorTest {
    private final CallbackExecutor executor = new CallbackExecutor("test-callback");

    /** Hands runs off from a fresh platform thread (a stand-in for an I/O thread) and waits until it has. */
    private static void fromPlatformThread(Runnable handOff) throws InterruptedException {
        Thread t = Thread.ofPlatform().name("test-io").start(handOff);
        t.join();
    }

    @Test
    void aBurstRunsOffTheHandingOffThreadAndEveryRunRuns() throws Exception {
        int runs = 1000;
        CountDownLatch done = new CountDownLatch(runs);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        Thread[] io = new Thread[1];
        fromPlatformThread(() -> {
            io[0] = Thread.currentThread();
            for (int i = 0; i < runs; i++) {
                executor.execute(() -> {
                    ranOn.add(Thread.currentThread());
                    done.countDown();
                });
            }
        });
        assertTrue(done.await(60, TimeUnit.SECONDS), "every run ran");
        assertEquals(runs, ranOn.size());
        assertFalse(ranOn.contains(io[0]), "no run ran on the handing-off thread");
    }

    @Test
    void runsHandedOffDuringAHeldBurstStartAtItsEndInOrder() throws Exception {
        int runs = CallbackLane.HELD_RUNS_LIMIT - 1; // fewer than wake a worker during the burst
        CountDownLatch done = new CountDownLatch(runs);
        List<Integer> order = new CopyOnWriteArrayList<>();
        long[] waitingAtRelease = new long[1];
        fromPlatformThread(() -> {
            CallbackLane lane = executor.holdWakes();
            for (int i = 0; i < runs; i++) {
                int n = i;
                executor.execute(() -> {
                    order.add(n);
                    done.countDown();
                });
            }
            // no worker holds this new thread's lane while the burst is held, so none of the runs can have started
            waitingAtRelease[0] = done.getCount();
            lane.releaseWakes();
        });
        assertEquals(runs, waitingAtRelease[0], "no run started before the burst's end");
        assertTrue(done.await(60, TimeUnit.SECONDS), "every run ran after the burst's end");
        assertEquals(java.util.stream.IntStream.range(0, runs).boxed().toList(), order);
    }

    @Test
    void aHeldBurstWakesAWorkerOnceEnoughRunsWaitAndHoldsNest() throws Exception {
        int runs = CallbackLane.HELD_RUNS_LIMIT * 4;
        CountDownLatch firstBatch = new CountDownLatch(runs);
        CountDownLatch late = new CountDownLatch(1);
        CompletableFuture<Long> lateWaitingAfterInnerRelease = new CompletableFuture<>();
        fromPlatformThread(() -> {
            CallbackLane outer = executor.holdWakes();
            CallbackLane inner = executor.holdWakes();
            for (int i = 0; i < runs; i++) {
                executor.execute(firstBatch::countDown);
            }
            try {
                // once the limit's worth of runs waited, a worker took them, although the burst is still held
                assertTrue(firstBatch.await(60, TimeUnit.SECONDS), "a long held burst is not held back");
                // once the worker has let the lane go, a new run waits for the (nested) holds' end again
                awaitLaneIdle(outer);
                executor.execute(late::countDown);
                inner.releaseWakes();
                lateWaitingAfterInnerRelease.complete(late.getCount());
            } catch (InterruptedException e) {
                lateWaitingAfterInnerRelease.completeExceptionally(e);
            }
            outer.releaseWakes();
        });
        assertEquals(1L, lateWaitingAfterInnerRelease.get(60, TimeUnit.SECONDS), "the outer hold still held the run");
        assertTrue(late.await(60, TimeUnit.SECONDS), "the run ran once the outer hold ended");
        assertThrows(IllegalStateException.class, () -> new CallbackLane(executor).releaseWakes(), "a release with no hold");
    }

    /** Waits until no worker holds {@code lane} (its worker found the queue empty and let it go). */
    private static void awaitLaneIdle(CallbackLane lane) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!lane.isIdle()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("the lane's worker never let it go");
            }
            Thread.yield();
        }
    }

    @Test
    void aRunBlockedOnALaterRunOfTheSameLaneDoesNotDeadlock() throws Exception {
        blockedOnALaterRun(false);
    }

    /** The same with both runs handed off in one held burst: the watchdog sees the second wait behind the first. */
    @Test
    void aRunBlockedOnALaterRunOfTheSameHeldBurstDoesNotDeadlock() throws Exception {
        blockedOnALaterRun(true);
    }

    private void blockedOnALaterRun(boolean held) throws Exception {
        CountDownLatch laterRan = new CountDownLatch(1);
        CompletableFuture<Thread> blocked = new CompletableFuture<>();
        CompletableFuture<Thread> later = new CompletableFuture<>();
        fromPlatformThread(() -> {
            CallbackLane lane = held ? executor.holdWakes() : null;
            executor.execute(() -> {
                try {
                    assertTrue(laterRan.await(60, TimeUnit.SECONDS), "the later run ran while this one waited");
                    blocked.complete(Thread.currentThread());
                } catch (InterruptedException | AssertionError e) {
                    blocked.completeExceptionally(e);
                }
            });
            executor.execute(() -> {
                later.complete(Thread.currentThread());
                laterRan.countDown();
            });
            if (lane != null) {
                lane.releaseWakes();
            }
        });
        Thread blockedOn = blocked.get(60, TimeUnit.SECONDS);
        assertNotSame(blockedOn, later.get(60, TimeUnit.SECONDS), "another worker took the lane over");
    }

    @Test
    void manyRunsBlockedAtOnceAllGetAWorker() throws Exception {
        int blockers = 200;
        CountDownLatch allStarted = new CountDownLatch(blockers);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(blockers);
        fromPlatformThread(() -> {
            for (int i = 0; i < blockers; i++) {
                executor.execute(() -> {
                    allStarted.countDown();
                    try {
                        if (release.await(60, TimeUnit.SECONDS)) {
                            finished.countDown();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
        });
        assertTrue(allStarted.await(60, TimeUnit.SECONDS), "every blocking run started while the others were blocked");
        release.countDown();
        assertTrue(finished.await(60, TimeUnit.SECONDS), "every run finished");
    }

    @Test
    void theLaneKeepsWorkingAfterATakeOverAndAfterARunThrows() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuckStarted = new CountDownLatch(1);
        CountDownLatch afterwards = new CountDownLatch(3);
        fromPlatformThread(() -> {
            executor.execute(() -> {
                stuckStarted.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            executor.execute(() -> {
                throw new IllegalStateException("a run that throws (expected in this test)");
            });
            executor.execute(afterwards::countDown);
            try {
                assertTrue(stuckStarted.await(60, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            executor.execute(afterwards::countDown);
            executor.execute(afterwards::countDown);
        });
        assertTrue(afterwards.await(60, TimeUnit.SECONDS), "runs behind a blocked and a throwing run still ran");
        release.countDown();
    }

    @Test
    void runsHandedOffFromAVirtualThreadRunToo() throws Exception {
        CompletableFuture<Boolean> ranOnVirtual = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> executor.execute(() -> ranOnVirtual.complete(Thread.currentThread().isVirtual()))).join();
        assertTrue(ranOnVirtual.get(60, TimeUnit.SECONDS));
    }
}
