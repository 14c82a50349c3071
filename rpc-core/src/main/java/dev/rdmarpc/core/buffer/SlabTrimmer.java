package dev.rdmarpc.core.buffer;

import java.lang.ref.WeakReference;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread that ticks every pool's memory decay ({@link SlabPool#decayTick()}). A pool is
 * held weakly: once it is unreachable its ticks stop.
 */
final class SlabTrimmer {
    private static final System.Logger LOG = System.getLogger(SlabPool.class.getName());
    private static final ScheduledThreadPoolExecutor TIMER = newTimer();

    private SlabTrimmer() {
    }

    private static ScheduledThreadPoolExecutor newTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().daemon().name("rdmarpc-slab-trim").factory());
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** Ticks {@code pool} every {@code intervalMillis} for as long as it is reachable. */
    static void schedule(SlabPool pool, long intervalMillis) {
        Tick tick = new Tick(pool);
        tick.future = TIMER.scheduleWithFixedDelay(tick, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    private static final class Tick implements Runnable {
        private final WeakReference<SlabPool> pool;
        volatile ScheduledFuture<?> future;

        Tick(SlabPool pool) {
            this.pool = new WeakReference<>(pool);
        }

        @Override
        public void run() {
            SlabPool p = pool.get();
            if (p == null) {
                ScheduledFuture<?> f = future;
                if (f != null) {
                    f.cancel(false);
                }
                return;
            }
            try {
                p.decayTick();
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.WARNING, "slab pool trim failed", e);
            }
        }
    }
}
