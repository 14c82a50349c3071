package dev.rdmarpc.core.internal.exec;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default executor of call callbacks: each platform thread that hands runs off (a transport's I/O thread,
 * usually) gets its own {@link CallbackLane}, drained in bursts by a parked worker, so a burst of ready calls costs
 * one wake-up. A virtual thread handing a run off (a handler calling another service, say) starts a virtual thread
 * for it instead: virtual threads are many and short-lived, a lane each would not pay off.
 */
public final class CallbackExecutor implements Executor {
    private final String name;
    private final ThreadLocal<CallbackLane> lanes = ThreadLocal.withInitial(() -> new CallbackLane(this));
    private final Thread.Builder.OfVirtual virtualWorkers;
    private final AtomicInteger platformWorkers = new AtomicInteger();
    private final StallWatchdog watchdog;

    CallbackExecutor(String name) {
        this.name = name;
        this.virtualWorkers = Thread.ofVirtual().name(name + "-virtual");
        this.watchdog = new StallWatchdog(name + "-watchdog");
    }

    @Override
    public void execute(Runnable run) {
        if (Thread.currentThread().isVirtual()) {
            virtualWorkers.start(run);
        } else {
            lanes.get().execute(run);
        }
    }

    /**
     * The calling thread is about to hand off a burst of runs (an I/O thread reading a batch of frames): its lane
     * wakes a worker once, at {@link CallbackLane#releaseWakes} on the returned lane, not at every run. Null (nothing
     * to release) on a virtual thread, which has no lane.
     */
    public CallbackLane holdWakes() {
        if (Thread.currentThread().isVirtual()) {
            return null;
        }
        CallbackLane lane = lanes.get();
        lane.holdWakes();
        return lane;
    }

    StallWatchdog watchdog() {
        return watchdog;
    }

    /** A lane's worker hands its own runs off to its lane (they queue behind the run it is in). */
    void bindToCurrentThread(CallbackLane lane) {
        lanes.set(lane);
    }

    /** An unstarted platform worker for a lane. */
    Thread newPlatformWorker(Runnable loop) {
        Thread t = new Thread(loop, name + "-" + platformWorkers.incrementAndGet());
        t.setDaemon(true);
        return t;
    }

    /** An unstarted virtual worker for a lane (one that takes over from a stalled worker, or while it is busy). */
    Thread newVirtualWorker(Runnable loop) {
        return virtualWorkers.unstarted(loop);
    }
}
