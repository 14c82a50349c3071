package dev.rdmarpc.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs one call's callbacks one at a time, in order, on the call's executor, and never while the call's lock is held.
 * A state change asks for a run with the lock held ({@link #requestLocked}) and starts it only after releasing the
 * lock ({@link #start}), so any executor, a direct one included, runs user code with no lock of core's held. The run
 * itself is the owner's loop ({@link #run}, which a stream's subclass gives): it takes one piece of work at a time
 * under the lock, delivers it outside, and ends with {@link #idleLocked} when nothing is left. Shared by both sides
 * of a call (each stream makes one subclass instance, the run handed to the executor); guarded by the owner's lock.
 */
abstract class SerializingDrain implements Runnable {
    private final Object lock;
    private final Executor executor;
    private boolean scheduled;
    private boolean dead;

    SerializingDrain(Object lock, Executor executor) {
        this.lock = lock;
        this.executor = executor;
    }

    /** The owner's delivery loop, on the executor. */
    @Override
    public abstract void run();

    /** The executor refused a run: the owner's callbacks can no longer be delivered (it ends the call). */
    abstract void rejected(RejectedExecutionException e);

    /** With the lock held: asks for a run; true when the caller must {@link #start} one after releasing the lock. */
    final boolean requestLocked() {
        if (scheduled || dead) {
            return false;
        }
        scheduled = true;
        return true;
    }

    /** With the lock held, from the loop: nothing left to deliver; the next request starts a new run. */
    final void idleLocked() {
        scheduled = false;
    }

    /** Without the lock: hands the loop to the executor (only after {@link #requestLocked} returned true). */
    final void start() {
        assert !Thread.holdsLock(lock) : "a call's callbacks must never start under its lock";
        try {
            executor.execute(this);
        } catch (RejectedExecutionException e) {
            synchronized (lock) {
                dead = true;
            }
            rejected(e);
        }
    }
}
