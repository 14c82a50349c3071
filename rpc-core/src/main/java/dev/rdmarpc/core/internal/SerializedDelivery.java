package dev.rdmarpc.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs one call's callbacks one at a time, in order, on the call's executor, and never while the call's lock (the
 * stream itself) is held: the one delivery mechanism of both streams, with no object per call. The stream is the run
 * handed to the executor ({@link #run}, its delivery loop) and keeps this mechanism's two flags in a field of its own
 * ({@link #drainFlags}). A state change asks for a run with the lock held ({@link #requestDrainLocked}) and starts it
 * only after releasing the lock ({@link #startDrain}), so any executor, a direct one included, runs user code with
 * no lock of core's held. The loop takes one piece of work at a time under the lock, delivers it outside, and ends
 * with {@link #drainIdleLocked} when nothing is left.
 */
interface SerializedDelivery extends Runnable {
    /** A run is scheduled or running: the next request need not start another. */
    int SCHEDULED = 1;
    /** The executor refused a run: no callback can be delivered any more. */
    int DEAD = 2;

    /** The flags, read with the lock held. */
    int drainFlags();

    /** Sets the flags, with the lock held. */
    void drainFlags(int flags);

    /** The executor the runs go to. */
    Executor drainExecutor();

    /** The executor refused a run: the owner's callbacks can no longer be delivered (it ends the call). */
    void drainRejected(RejectedExecutionException e);

    /** With the lock held: asks for a run; true when the caller must {@link #startDrain} one after releasing it. */
    default boolean requestDrainLocked() {
        int flags = drainFlags();
        if ((flags & (SCHEDULED | DEAD)) != 0) {
            return false;
        }
        drainFlags(flags | SCHEDULED);
        return true;
    }

    /** With the lock held, from the loop: nothing left to deliver; the next request starts a new run. */
    default void drainIdleLocked() {
        drainFlags(drainFlags() & ~SCHEDULED);
    }

    /** Without the lock: hands the loop to the executor (only after {@link #requestDrainLocked} returned true). */
    default void startDrain() {
        assert !Thread.holdsLock(this) : "a call's callbacks must never start under its lock";
        try {
            drainExecutor().execute(this);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                drainFlags(drainFlags() | DEAD);
            }
            drainRejected(e);
        }
    }
}
