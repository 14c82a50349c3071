package dev.rdmarpc.transport.rdma.verbs;

/**
 * What a connection's send side needs of a queue pair: posting send work requests, moving to ERR and being
 * destroyed. {@link QueuePair} is the real one; unit tests of the send queue use a fake that records what is posted.
 */
public interface SendQueueTarget {
    /** The queue pair number (for messages). */
    int qpNum();

    /** The inline size the device granted ({@code max_inline_data}). */
    int maxInlineData();

    /** Posts a send work request; returns 0 or the errno ({@code ENOMEM}: the send queue is full). */
    int tryPostSend(SendWorkRequest wr);

    /** Moves the queue pair to ERR: everything outstanding completes with {@code IBV_WC_WR_FLUSH_ERR}. */
    void toError();

    /** Destroys the queue pair. */
    void close();
}
