package dev.rdmarpc.core.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits in tests for a condition to hold, polling it; the bound only ends a test that is hung. */
public final class Await {
    /**
     * How long {@link #until(BooleanSupplier, String)} waits before it gives up. Far beyond what any condition
     * of a working test needs, even on a loaded machine: reaching it means the test is hung, not slow.
     */
    public static final Duration DEFAULT_BOUND = Duration.ofSeconds(60);

    private static final long MAX_PAUSE_NANOS = 10_000_000L;

    private Await() {
    }

    /** Waits until {@code condition} holds; fails naming {@code what} if it does not within the default bound. */
    public static void until(BooleanSupplier condition, String what) {
        until(DEFAULT_BOUND, condition, () -> what);
    }

    /**
     * Waits until {@code condition} holds; fails with the description {@code what} gives at that moment (so it can
     * name the state it saw) if it does not within the default bound.
     */
    public static void until(BooleanSupplier condition, Supplier<String> what) {
        until(DEFAULT_BOUND, condition, what);
    }

    /** Waits until {@code condition} holds; fails naming {@code what} if it does not within {@code bound}. */
    public static void until(Duration bound, BooleanSupplier condition, Supplier<String> what) {
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(what, "what");
        long start = System.nanoTime();
        long limit = bound.toNanos();
        long pause = 100_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > limit) {
                // one last look: the condition may have come true while this thread was not scheduled
                if (condition.getAsBoolean()) {
                    return;
                }
                throw new AssertionError("gave up after " + bound.toSeconds() + " s waiting for: " + what.get());
            }
            try {
                Thread.sleep(Duration.ofNanos(pause));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what.get(), e);
            }
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }
}
