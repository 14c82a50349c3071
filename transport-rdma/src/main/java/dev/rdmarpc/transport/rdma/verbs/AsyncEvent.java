package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a preallocated {@code struct ibv_async_event}, filled by {@link IbvContext#awaitAsyncEvent};
 * every event must be {@link #ack() acknowledged}.
 */
public final class AsyncEvent {
    /** {@code IBV_EVENT_CQ_ERR}. */
    public static final int CQ_ERR = 0;
    /** {@code IBV_EVENT_QP_FATAL}. */
    public static final int QP_FATAL = 1;
    /** {@code IBV_EVENT_QP_REQ_ERR}. */
    public static final int QP_REQ_ERR = 2;
    /** {@code IBV_EVENT_QP_ACCESS_ERR}. */
    public static final int QP_ACCESS_ERR = 3;
    /** {@code IBV_EVENT_COMM_EST}. */
    public static final int COMM_EST = 4;
    /** {@code IBV_EVENT_SQ_DRAINED}. */
    public static final int SQ_DRAINED = 5;
    /** {@code IBV_EVENT_DEVICE_FATAL}. */
    public static final int DEVICE_FATAL = 8;
    /** {@code IBV_EVENT_PORT_ACTIVE}. */
    public static final int PORT_ACTIVE = 9;
    /** {@code IBV_EVENT_PORT_ERR}. */
    public static final int PORT_ERR = 10;
    /** {@code IBV_EVENT_LID_CHANGE}. */
    public static final int LID_CHANGE = 11;
    /** {@code IBV_EVENT_PKEY_CHANGE}. */
    public static final int PKEY_CHANGE = 12;
    /** {@code IBV_EVENT_SM_CHANGE}. */
    public static final int SM_CHANGE = 13;
    /** {@code IBV_EVENT_SRQ_ERR}. */
    public static final int SRQ_ERR = 14;
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}. */
    public static final int SRQ_LIMIT_REACHED = 15;
    /** {@code IBV_EVENT_QP_LAST_WQE_REACHED}. */
    public static final int QP_LAST_WQE_REACHED = 16;
    /** {@code IBV_EVENT_CLIENT_REREGISTER}. */
    public static final int CLIENT_REREGISTER = 17;
    /** {@code IBV_EVENT_GID_CHANGE}. */
    public static final int GID_CHANGE = 18;
    /** {@code IBV_EVENT_WQ_FATAL}. */
    public static final int WQ_FATAL = 19;

    private static final String[] NAMES = {
            "IBV_EVENT_CQ_ERR", "IBV_EVENT_QP_FATAL", "IBV_EVENT_QP_REQ_ERR", "IBV_EVENT_QP_ACCESS_ERR",
            "IBV_EVENT_COMM_EST", "IBV_EVENT_SQ_DRAINED", "IBV_EVENT_PATH_MIG", "IBV_EVENT_PATH_MIG_ERR",
            "IBV_EVENT_DEVICE_FATAL", "IBV_EVENT_PORT_ACTIVE", "IBV_EVENT_PORT_ERR", "IBV_EVENT_LID_CHANGE",
            "IBV_EVENT_PKEY_CHANGE", "IBV_EVENT_SM_CHANGE", "IBV_EVENT_SRQ_ERR", "IBV_EVENT_SRQ_LIMIT_REACHED",
            "IBV_EVENT_QP_LAST_WQE_REACHED", "IBV_EVENT_CLIENT_REREGISTER", "IBV_EVENT_GID_CHANGE",
            "IBV_EVENT_WQ_FATAL"};

    private final MemorySegment event;
    private final MemorySegment pollScratch;
    private boolean pending;

    /** Allocates the event struct (and the wait's scratch memory) in {@code arena}. */
    public AsyncEvent(Arena arena) {
        this.event = arena.allocate(IbvAsyncEvent.LAYOUT);
        this.pollScratch = LibC.allocateScratch(arena);
    }

    MemorySegment pollScratch() {
        return pollScratch;
    }

    void fill(IbvContext context) {
        if (pending) {
            throw new IllegalStateException("acknowledge the previous event (" + typeName(type()) + ") first");
        }
        LibIbverbs.getAsyncEvent(context.segment(), event);
        pending = true;
    }

    /** {@code event_type}, one of the constants. */
    public int type() {
        return event.get(JAVA_INT, IbvAsyncEvent.EVENT_TYPE);
    }

    /** Address of the affected CQ, QP, SRQ or WQ (compare with their {@code address()}); meaningless for port events. */
    public long elementAddress() {
        return event.get(ADDRESS, IbvAsyncEvent.ELEMENT).address();
    }

    /** The port, for port events. */
    public int portNum() {
        return event.get(JAVA_INT, IbvAsyncEvent.PORT_NUM);
    }

    /** Whether an event was received and not yet acknowledged. */
    public boolean isPending() {
        return pending;
    }

    /** Acknowledges the event ({@code ibv_ack_async_event}). */
    public void ack() {
        if (pending) {
            LibIbverbs.ackAsyncEvent(event);
            pending = false;
        }
    }

    /** The name of an event type, e.g. {@code IBV_EVENT_SRQ_LIMIT_REACHED}. */
    public static String typeName(int type) {
        return type >= 0 && type < NAMES.length ? NAMES[type] : "IBV_EVENT_" + type;
    }

    @Override
    public String toString() {
        return "AsyncEvent[" + typeName(type()) + ", element 0x" + Long.toHexString(elementAddress()) + "]";
    }
}
