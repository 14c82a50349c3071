package dev.rdmarpc.bench.driver;

/**
 * One independent sequence of calls: a worker slot for unary and server-stream calls, a long-lived
 * stream for bidi. Its listener hears of every completion.
 */
public interface Lane {

    /** Sends one call; {@code startNanos} ({@link System#nanoTime()}) is handed back on completion. */
    void call(long startNanos);

    /** Ends the lane (half-closes its stream, if any); calls still in flight may still complete. */
    void close();
}
