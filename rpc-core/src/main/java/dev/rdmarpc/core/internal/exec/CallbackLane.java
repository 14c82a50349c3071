package dev.rdmarpc.core.internal.exec;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The callback runs handed off by one thread (an I/O thread, usually), drained in bursts: the hand-off appends the
 * run to a queue and wakes a worker only when no worker holds the lane, and the worker then takes run after run
 * until the queue is empty. So a burst of ready calls costs one wake-up, not one per call.
 *
 * <p>The worker that holds the lane is its parked platform thread when that one is free (waking it is the cheapest
 * hand-off there is), otherwise a virtual thread. A run may block (a handler waiting for another call, a sender
 * waiting for flow-control room): the {@link StallWatchdog} watches every lane with runs waiting, and when the
 * lane's holder stayed inside one run for a whole tick it gives the lane to a fresh virtual thread (a holder merely
 * slow to get a CPU keeps the lane: another thread would wait for one too). The stalled worker
 * finishes its run and then leaves the lane (the platform thread parks again; a virtual one ends), so a blocked
 * handler never starves the other calls of its connection, and blocked handlers beyond the first hold no OS
 * thread. Guarded by this object's monitor.
 */
public final class CallbackLane {
    private static final System.Logger LOG = System.getLogger(CallbackLane.class.getName());
    /** How long an idle platform worker stays parked before its thread ends (the next hand-off starts a new one). */
    private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(10);
    /**
     * How long an idle platform worker spins before it parks ({@code -Drdmarpc.callbackSpinNanos}, default 0): a run
     * handed off meanwhile then starts without the OS waking a thread, at the price of a core busy while it spins. Off
     * by default: on a loaded machine the spinning worker takes the CPU the I/O threads need, and measured slower.
     */
    private static final long SPIN_NANOS = Long.getLong("rdmarpc.callbackSpinNanos", 0L);
    /**
     * During a held burst ({@link #holdWakes}), a worker is woken anyway once this many runs wait
     * ({@code -Drdmarpc.callbackHeldRuns}, default 4; 1 wakes at every run, as without holding): enough to wake the
     * worker once for the frames of one call, few enough that at high concurrency it starts on a burst's first calls
     * while the I/O thread reads the rest (measured: 4 was at least as fast as 16 at 64 calls in flight).
     */
    static final int HELD_RUNS_LIMIT = Math.max(1, Integer.getInteger("rdmarpc.callbackHeldRuns", 4));

    private final CallbackExecutor owner;
    private Runnable[] ring = new Runnable[64];
    private int head;
    private int size;
    /** The worker that takes runs from the queue, or null: the next hand-off assigns one. */
    private volatile Thread holder;
    /** The parked platform worker, or null when it is running (or gone). */
    private Thread idlePlatform;
    private boolean platformAlive;
    /** Runs taken so far: the watchdog's progress mark. */
    private long taken;
    /** Whether the holder is inside a run (not merely woken and waiting for a CPU, which no other worker would fix). */
    private boolean holderInRun;
    private long takenAtLastCheck;
    private boolean watched;
    /** Nested {@link #holdWakes} of the owning thread not yet released. */
    private int holds;

    CallbackLane(CallbackExecutor owner) {
        this.owner = owner;
    }

    /** Queues a run and makes sure a worker holds the lane (at the end of a held burst: {@link #holdWakes}). */
    void execute(Runnable run) {
        Thread worker = null;
        boolean watch;
        synchronized (this) {
            push(run);
            if (holder == null) {
                if (holds > 0 && size < HELD_RUNS_LIMIT) {
                    return; // the burst's end wakes the worker once for all of them
                }
                worker = assignHolderLocked();
                watch = size > 1 && watchLocked(); // runs held back in a burst wait behind the first
            } else {
                watch = watchLocked();
            }
        }
        startOrWake(worker);
        if (watch) {
            owner.watchdog().watch(this);
        }
    }

    /**
     * The owning thread is about to hand off a burst of runs (the frames of one read): until {@link #releaseWakes},
     * runs queue without waking a worker, unless {@link #HELD_RUNS_LIMIT} already wait, so the burst costs one
     * wake-up instead of one per run (a worker that empties the queue between two runs parks and must be woken again).
     * Holds nest.
     */
    synchronized void holdWakes() {
        holds++;
    }

    /** Ends a {@link #holdWakes}: a worker takes the runs that queued meanwhile. */
    public void releaseWakes() {
        Thread worker;
        boolean watch;
        synchronized (this) {
            if (holds <= 0) {
                throw new IllegalStateException("releaseWakes without holdWakes");
            }
            if (--holds > 0 || holder != null || size == 0) {
                return;
            }
            worker = assignHolderLocked();
            watch = size > 1 && watchLocked(); // the first run may block: the watchdog must see the others wait
        }
        startOrWake(worker);
        if (watch) {
            owner.watchdog().watch(this);
        }
    }

    /** Whether no worker holds the lane (tests). */
    synchronized boolean isIdle() {
        return holder == null;
    }

    /**
     * Makes a worker the holder and returns it: the parked platform worker (to unpark), else a new platform worker if
     * there is none, else a virtual one (both unstarted).
     */
    private Thread assignHolderLocked() {
        Thread t;
        if (idlePlatform != null) {
            t = idlePlatform;
            idlePlatform = null;
        } else if (!platformAlive) {
            platformAlive = true;
            t = owner.newPlatformWorker(this::platformLoop);
        } else {
            t = owner.newVirtualWorker(this::virtualLoop);
        }
        holder = t;
        holderInRun = false;
        return t;
    }

    /** Outside the lock: starts a worker {@link #assignHolderLocked} made, or wakes the parked one; null: nothing. */
    private static void startOrWake(Thread worker) {
        if (worker == null) {
            return;
        }
        if (worker.getState() == Thread.State.NEW) {
            worker.start();
        } else {
            LockSupport.unpark(worker);
        }
    }

    /** Runs wait behind the holder's: whether the caller must hand the lane to the watchdog (not watched yet). */
    private boolean watchLocked() {
        if (watched) {
            return false;
        }
        watched = true;
        takenAtLastCheck = taken;
        return true;
    }

    /**
     * From the watchdog, once a tick: false when the lane no longer needs watching (empty, or nobody holds it).
     * When the holder has been inside the same run since the last check while runs wait, a fresh virtual thread
     * takes the lane over.
     */
    boolean check() {
        Thread start = null;
        synchronized (this) {
            if (size == 0 || holder == null) {
                watched = false;
                return false;
            }
            if (taken == takenAtLastCheck && holderInRun) {
                start = owner.newVirtualWorker(this::virtualLoop);
                holder = start;
                holderInRun = false;
            }
            takenAtLastCheck = taken;
        }
        if (start != null) {
            start.start();
        }
        return true;
    }

    private void platformLoop() {
        Thread me = Thread.currentThread();
        owner.bindToCurrentThread(this);
        while (true) {
            Runnable run = takeOrRelease(me);
            if (run != null) {
                runSafely(run);
                continue;
            }
            if (!spinUntilHolder(me) && !parkUntilHolder(me)) {
                return;
            }
        }
    }

    /** Spins a little while for the lane to be handed to this platform worker again; true when it was. */
    private boolean spinUntilHolder(Thread me) {
        if (SPIN_NANOS <= 0) {
            return false;
        }
        long end = System.nanoTime() + SPIN_NANOS;
        while (holder != me) {
            if (System.nanoTime() - end >= 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /** Parks until the lane is handed to this platform worker again; false when it stayed idle too long and ends. */
    private boolean parkUntilHolder(Thread me) {
        long deadline = System.nanoTime() + KEEP_ALIVE_NANOS;
        while (holder != me) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                synchronized (this) {
                    if (holder != me) {
                        idlePlatform = null;
                        platformAlive = false;
                        return false;
                    }
                }
                return true;
            }
            LockSupport.parkNanos(this, left);
        }
        return true;
    }

    private void virtualLoop() {
        Thread me = Thread.currentThread();
        while (true) {
            Runnable run = takeOrRelease(me);
            if (run == null) {
                return;
            }
            runSafely(run);
        }
    }

    /**
     * The next run for this worker, or null when it does not (or no longer) hold the lane; a holder that finds the
     * queue empty releases the lane. A platform worker that gets null is idle again.
     */
    private synchronized Runnable takeOrRelease(Thread me) {
        boolean platform = !me.isVirtual();
        if (holder != me) {
            if (platform) {
                idlePlatform = me;
            }
            return null;
        }
        if (size == 0) {
            holder = null;
            holderInRun = false;
            if (platform) {
                idlePlatform = me;
            }
            return null;
        }
        taken++;
        holderInRun = true;
        return pop();
    }

    private static void runSafely(Runnable run) {
        try {
            run.run();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "a callback run threw", e);
        }
    }

    private void push(Runnable run) {
        if (size == ring.length) {
            Runnable[] bigger = new Runnable[ring.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = ring[(head + i) % ring.length];
            }
            ring = bigger;
            head = 0;
        }
        ring[(head + size) % ring.length] = run;
        size++;
    }

    private Runnable pop() {
        Runnable run = ring[head];
        ring[head] = null;
        head = (head + 1) % ring.length;
        size--;
        return run;
    }
}
