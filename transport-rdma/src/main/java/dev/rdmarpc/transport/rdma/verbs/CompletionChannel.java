package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A completion channel ({@code struct ibv_comp_channel *}): the file descriptor a poller blocks on after arming its
 * CQs with {@link CompletionQueue#requestNotify(boolean)}.
 * <p>{@link #awaitEvent(long)} is meant for one thread (the poller); it does not allocate.
 */
public final class CompletionChannel implements AutoCloseable {
    private final IbvContext context;
    private final MemorySegment channel;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment cqSlot;
    private final MemorySegment cqContextSlot;
    private final MemorySegment pollScratch;
    private volatile CompletionQueue[] cqs = new CompletionQueue[0];
    private boolean closed;

    CompletionChannel(IbvContext context, MemorySegment channel) {
        this.context = context;
        this.channel = channel;
        this.cqSlot = arena.allocate(ADDRESS);
        this.cqContextSlot = arena.allocate(ADDRESS);
        this.pollScratch = LibC.allocateScratch(arena);
    }

    MemorySegment segment() {
        return channel;
    }

    /** The device context. */
    public IbvContext context() {
        return context;
    }

    /** The channel's file descriptor (readable when an event is pending). */
    public int fd() {
        return channel.get(JAVA_INT, IbvCompChannelStruct.FD);
    }

    synchronized void register(CompletionQueue cq) {
        CompletionQueue[] next = Arrays.copyOf(cqs, cqs.length + 1);
        next[next.length - 1] = cq;
        cqs = next;
    }

    synchronized void unregister(CompletionQueue cq) {
        cqs = Arrays.stream(cqs).filter(c -> c != cq).toArray(CompletionQueue[]::new);
    }

    /**
     * Waits up to {@code timeoutMillis} ({@code < 0}: forever) for a completion event ({@code poll(2)} on the fd,
     * then {@code ibv_get_cq_event}). The event must be acknowledged with {@link CompletionQueue#ackEvents(int)}
     * (batching acks is fine; {@link CompletionQueue#close()} acks what is left), and the CQ re-armed.
     *
     * @return the CQ that has the event, or null on timeout
     */
    public CompletionQueue awaitEvent(long timeoutMillis) {
        if (closed) {
            throw new IllegalStateException("completion channel is closed");
        }
        if (!LibC.awaitReadable(pollScratch, fd(), timeoutMillis, "completion channel")) {
            return null;
        }
        LibIbverbs.getCqEvent(channel, cqSlot, cqContextSlot);
        long address = cqSlot.get(ADDRESS, 0).address();
        for (CompletionQueue cq : cqs) {
            if (cq.address() == address) {
                cq.eventReceived();
                return cq;
            }
        }
        throw new IllegalStateException("completion event for an unknown CQ at 0x" + Long.toHexString(address));
    }

    /**
     * Like {@link #awaitEvent(long)}, but also returns when {@code wakeup} is signalled: then null, with the eventfd
     * drained. The caller tells a wakeup from a timeout by its own state. Does not allocate.
     */
    public CompletionQueue awaitEvent(long timeoutMillis, EventFd wakeup) {
        if (closed) {
            throw new IllegalStateException("completion channel is closed");
        }
        int ready = LibC.awaitEither(pollScratch, fd(), wakeup.fd(), timeoutMillis, "completion channel");
        if ((ready & 2) != 0) {
            wakeup.drain();
        }
        if ((ready & 1) == 0) {
            return null;
        }
        LibIbverbs.getCqEvent(channel, cqSlot, cqContextSlot);
        long address = cqSlot.get(ADDRESS, 0).address();
        for (CompletionQueue cq : cqs) {
            if (cq.address() == address) {
                cq.eventReceived();
                return cq;
            }
        }
        throw new IllegalStateException("completion event for an unknown CQ at 0x" + Long.toHexString(address));
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** Destroys the channel ({@code ibv_destroy_comp_channel}); fails with EBUSY while CQs still use it. */
    @Override
    public void close() {
        if (!closed) {
            LibIbverbs.destroyCompChannel(channel);
            closed = true;
            arena.close();
        }
    }
}
