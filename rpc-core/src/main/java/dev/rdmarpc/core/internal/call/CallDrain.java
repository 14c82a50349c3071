package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Status;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * Runs one call's callbacks one at a time, in order, on the call's executor, and never while the call's lock (its
 * stream) is held: the one delivery mechanism of both streams, an object of its own so that the call handed to
 * application code is no {@code Runnable}. A state change asks for a run with the lock held ({@link #requestLocked})
 * and starts it only after releasing the lock ({@link #start}), so any executor, a direct one included, runs user code
 * with no lock of core's held. The loop ({@link #deliverUntilIdle}) takes one piece of work at a time under the
 * lock, delivers it outside, and ends with {@link #idleLocked} when nothing is left. Each side's loop is a subclass
 * ({@link ClientDelivery}, {@link ServerDelivery}), so a stream still holds one object for its delivery.
 *
 * <p>It is also the send side's attachment-failure hook ({@link OutboundFlow#onAttachmentFailed}), which runs under
 * the owner's lock: it only records the failure, which the owner takes in the same hold of its lock
 * ({@link #takeAttachmentFailureLocked}) to end the call, and whose callbacks this drain then delivers after unlock.
 */
abstract class CallDrain implements Runnable, Consumer<Status> {
    /** What a drain runs for: a stream, whose monitor is the call's lock. */
    interface Owner {
        /** The executor the runs go to. */
        Executor drainExecutor();

        /** The executor refused a run: the owner's callbacks can no longer be delivered (it ends the call). */
        void drainRejected(RejectedExecutionException e);

        /** The loop ended as the last party of a recyclable call: the owner serves its next call now. */
        void recycle();
    }

    /** A run is scheduled or running: the next request need not start another. */
    private static final int SCHEDULED = 1;
    /** The executor refused a run: no callback can be delivered any more. */
    private static final int DEAD = 2;

    private final Owner owner;
    private int flags;
    private Status attachmentFailure;
    /** How many more messages the listener asked for. */
    private int requested;

    CallDrain(Owner owner) {
        this.owner = owner;
    }

    /** With the lock held: asks for a run; true when the caller must {@link #start} one after releasing it. */
    boolean requestLocked() {
        if ((flags & (SCHEDULED | DEAD)) != 0) {
            return false;
        }
        flags |= SCHEDULED;
        return true;
    }

    /** With the lock held, from the loop: nothing left to deliver; the next request starts a new run. */
    void idleLocked() {
        flags &= ~SCHEDULED;
    }

    /**
     * The loop, on the executor, without the lock: one callback at a time, chosen under the lock, run outside it; true
     * when it ended as the last party of a recyclable call ({@link Recycling#done}).
     */
    abstract boolean deliverUntilIdle();

    /** With the lock held, when the owner is recycled: as a new drain. */
    void resetLocked() {
        flags = 0;
        attachmentFailure = null;
        requested = 0;
    }

    /** With the lock held: the listener asked for {@code n} more messages. */
    void addRequestedLocked(int n) {
        requested = (int) Math.min(Integer.MAX_VALUE, (long) requested + n);
    }

    /** With the lock held: whether the listener asked for more messages than {@code inbound} holds. */
    boolean wantsMoreLocked(InboundMessages inbound) {
        return requested > inbound.queued();
    }

    /** With the lock held, from the loop: whether a message {@code inbound} holds was asked for; if so it is counted. */
    boolean takeRequestedLocked(InboundMessages inbound) {
        if (requested > 0 && inbound.hasMessage()) {
            requested--;
            return true;
        }
        return false;
    }

    /** Without the lock: hands the loop to the executor (only after {@link #requestLocked} returned true). */
    void start() {
        assert !Thread.holdsLock(owner) : "a call's callbacks must never start under its lock";
        try {
            owner.drainExecutor().execute(this);
        } catch (RejectedExecutionException e) {
            synchronized (owner) {
                flags |= DEAD;
            }
            owner.drainRejected(e);
        }
    }

    /** The loop, on the call's executor (core alone hands this object to an executor). */
    @Override
    public void run() {
        if (deliverUntilIdle()) {
            owner.recycle();
        }
    }

    /** The attachment being sent failed (under the owner's lock): kept for {@link #takeAttachmentFailureLocked}. */
    @Override
    public void accept(Status s) {
        if (attachmentFailure == null) {
            attachmentFailure = s;
        }
    }

    /** With the lock held: the attachment failure the send side reported since the last call, or null. */
    Status takeAttachmentFailureLocked() {
        Status s = attachmentFailure;
        attachmentFailure = null;
        return s;
    }
}
