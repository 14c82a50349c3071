package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * A completion queue ({@code struct ibv_cq *}). {@link #poll} and {@link #requestNotify} call the provider through
 * {@code ibv_context.ops} (they are static inline in the header) and do not allocate.
 */
public final class CompletionQueue implements AutoCloseable {
    private final IbvContext context;
    private final MemorySegment cq;
    private final CompletionChannel channel;
    private final MemorySegment pollFn;
    private final MemorySegment reqNotifyFn;
    private int unackedEvents;
    private boolean closed;

    CompletionQueue(IbvContext context, MemorySegment cq, CompletionChannel channel) {
        this.context = context;
        this.cq = cq;
        this.channel = channel;
        MemorySegment ctx = context.segment();
        this.pollFn = ctx.get(ADDRESS, IbvContextStruct.OPS_POLL_CQ);
        this.reqNotifyFn = ctx.get(ADDRESS, IbvContextStruct.OPS_REQ_NOTIFY_CQ);
    }

    MemorySegment segment() {
        return cq;
    }

    /** The device context. */
    public IbvContext context() {
        return context;
    }

    /** Address of the {@code struct ibv_cq}. */
    public long address() {
        return cq.address();
    }

    /** The completion channel, or null if the CQ is polled only. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The number of entries the device gave the CQ ({@code ibv_cq.cqe}, at least what was asked for). */
    public int capacity() {
        return cq.get(JAVA_INT, IbvCqStruct.CQE);
    }

    /**
     * Polls up to {@code batch.capacity()} completions into {@code batch} ({@code ibv_poll_cq}).
     *
     * @return the number of completions, 0 if the CQ is empty
     */
    public int poll(WorkCompletionBatch batch) {
        return poll(batch, batch.capacity());
    }

    /** Polls up to {@code max} completions into {@code batch}. */
    public int poll(WorkCompletionBatch batch, int max) {
        if (closed) {
            throw new IllegalStateException("completion queue is closed");
        }
        int n = LibIbverbs.pollCq(pollFn, cq, Math.min(max, batch.capacity()), batch.segment());
        if (n < 0) {
            throw new VerbsException("ibv_poll_cq", -n);
        }
        return n;
    }

    /**
     * Arms the CQ ({@code ibv_req_notify_cq}): the next completion (or next solicited one) raises one event on the
     * channel. Poll again after arming: completions that arrived before arming raise no event.
     */
    public void requestNotify(boolean solicitedOnly) {
        if (closed) {
            throw new IllegalStateException("completion queue is closed");
        }
        int errno = LibIbverbs.reqNotifyCq(reqNotifyFn, cq, solicitedOnly);
        if (errno != 0) {
            throw new VerbsException("ibv_req_notify_cq", errno);
        }
    }

    void eventReceived() {
        unackedEvents++;
    }

    /** Number of events received through the channel and not yet acknowledged. */
    public int unackedEvents() {
        return unackedEvents;
    }

    /** Acknowledges {@code count} events ({@code ibv_ack_cq_events}); one call may cover many events. */
    public void ackEvents(int count) {
        if (count <= 0) {
            return;
        }
        if (count > unackedEvents) {
            throw new IllegalArgumentException("acking " + count + " events but only " + unackedEvents + " are unacked");
        }
        LibIbverbs.ackCqEvents(cq, count);
        unackedEvents -= count;
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Acknowledges outstanding events, then destroys the CQ ({@code ibv_destroy_cq}); fails with EBUSY while a QP
     * or SRQ still uses it.
     */
    @Override
    public void close() {
        if (!closed) {
            if (unackedEvents > 0) {
                ackEvents(unackedEvents);
            }
            LibIbverbs.destroyCq(cq);
            closed = true;
            if (channel != null) {
                channel.unregister(this);
            }
        }
    }
}
