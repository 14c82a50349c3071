package dev.rdmarpc.bench.driver;

/** Hears of the completion of a lane's calls; invoked on whatever thread completes them. */
public interface LaneListener {

    /** A call that was sent at {@code startNanos} completed successfully. */
    void onComplete(Lane lane, long startNanos);

    /** A call that was sent at {@code startNanos} failed; the lane is dead. */
    void onError(Lane lane, long startNanos, Throwable error);
}
