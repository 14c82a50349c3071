package dev.rdmarpc.bench;

/** Where each framework runs handlers and callbacks during a cell. */
public enum ExecutorMode implements CliNamed {
    /** On the I/O threads (every framework's direct executor): the lowest latency, handlers must not block. */
    DIRECT,
    /** On each framework's default executor, where handlers may block. */
    DEFAULT;

    /** Whether handlers and callbacks run on the I/O threads. */
    public boolean direct() {
        return this == DIRECT;
    }

    @Override
    public String toString() {
        return cliName();
    }
}
