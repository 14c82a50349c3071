package dev.rdmarpc.core;

import java.util.concurrent.Callable;

/**
 * The server call a handler serves, as the calls it makes see it (grpc's {@code Context}, for deadline and
 * cancellation only). While a {@link ServerCalls} handler's code runs, {@link #current()} is its call: a call started
 * then on an {@link RpcChannel} gets that call's deadline when it has none of its own or a later one, and is cancelled
 * when that call is cancelled (by its client, its deadline, or the server). Elsewhere
 * {@code current()} is {@link #ROOT}, which has neither. {@code CallContext.ROOT.run(task)} detaches the calls
 * {@code task} makes (grpc's {@code Context.ROOT.run} or {@code fork()}); {@link #wrap} carries a context to another
 * thread.
 */
public interface CallContext {
    /** No deadline, never cancelled: calls made in it stand alone. */
    CallContext ROOT = new CallContext() {
        @Override
        public Deadline getDeadline() {
            return null;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public Runnable addCancelListener(Runnable listener) {
            return () -> { };
        }

        @Override
        public String toString() {
            return "CallContext.ROOT";
        }
    };

    /** The context of the server call whose handler runs on this thread, or {@link #ROOT}. */
    static CallContext current() {
        CallContext c = CurrentCall.get();
        return c != null ? c : ROOT;
    }

    /** The deadline calls made in this context inherit, or null for none. */
    Deadline getDeadline();

    /** True once the call is cancelled: calls made in it from then on end CANCELLED at once. */
    boolean isCancelled();

    /**
     * Runs {@code listener} once when this context is cancelled (at once, on this thread, if it already is), on the
     * thread that learns of it; returns what removes the listener again. Listeners must be quick and must not block.
     */
    Runnable addCancelListener(Runnable listener);

    /** Runs {@code task} with this context current on this thread, then restores the one before. */
    default void run(Runnable task) {
        CallContext previous = CurrentCall.enter(this);
        try {
            task.run();
        } finally {
            CurrentCall.exit(previous);
        }
    }

    /** Calls {@code task} with this context current on this thread, then restores the one before. */
    default <V> V call(Callable<V> task) throws Exception {
        CallContext previous = CurrentCall.enter(this);
        try {
            return task.call();
        } finally {
            CurrentCall.exit(previous);
        }
    }

    /** {@code task}, made to run with this context current on whichever thread runs it. */
    default Runnable wrap(Runnable task) {
        return () -> run(task);
    }
}
