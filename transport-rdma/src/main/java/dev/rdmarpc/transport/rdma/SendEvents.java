package dev.rdmarpc.transport.rdma;

/** What the send side tells its connection: a failure that closes it, and that it became writable again. */
interface SendEvents {
    /** Closes the connection because of {@code error}. */
    void closeOnError(Throwable error);

    /** Whether the caller runs on the connection's I/O (poller) thread. */
    boolean inIoThread();

    /** Bytes waiting to be posted fell below the low mark after the connection reported itself not writable. */
    void writable();

    /**
     * The same, found during one of core's own sends or flushes: core hears of it from a task of the poller's, after
     * that call returned (its caller may hold locks of its own).
     */
    void writableAfterCall();
}
