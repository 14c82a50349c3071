package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.ServerCall.Listener;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.attachment.Attachments;

/**
 * The delivery of one server call's callbacks: the handler's start, its listener, what is pending or done for it (the start,
 * a ready transition, the half-close, the end), and the loop that hands them over one at a time, chosen under the
 * stream's lock and run outside it on the server's executor. Its {@link CallDrain} part starts the runs and counts the
 * requests asked for. The stream keeps the call's state machine and tells this what happened through its
 * {@code ...Locked} methods, always with the stream's lock held.
 */
final class ServerDelivery<ReqT, RespT> extends CallDrain {
    private static final int START = 1, CANCEL = 2, MESSAGE = 3, HALF_CLOSE = 4, COMPLETE = 5, READY = 6;
    /** What is pending or done, the bits of {@link #pending}. */
    private static final int START_PENDING = 1, HALF_CLOSE_DELIVERED = 1 << 1, CANCEL_DELIVERED = 1 << 2,
            COMPLETE_DELIVERED = 1 << 3, READY_PENDING = 1 << 4;

    private final ServerStream<ReqT, RespT> stream;
    /** The listener the handler returned; null until it started. */
    private Listener<ReqT> listener;
    private int pending;

    ServerDelivery(ServerStream<ReqT, RespT> stream) {
        super(stream);
        this.stream = stream;
    }

    /** With the lock held, as a call begins on the stream: its handler is to be started first. */
    void beginLocked() {
        pending = START_PENDING;
    }

    @Override
    void resetLocked() {
        super.resetLocked();
        listener = null;
        pending = 0;
    }

    /** With the lock held: the call became ready to send; true when a run must start. */
    boolean readyLocked() {
        pending |= READY_PENDING;
        return requestLocked();
    }

    /** One callback at a time, chosen under the stream's lock and run outside it; true when it must recycle. */
    @Override
    boolean deliverUntilIdle() {
        while (true) {
            int action;
            SlabBuffer message = null;
            boolean compressed = false;
            int split = -1;
            SlabBuffer apart = null;
            int credit = 0;
            synchronized (stream) {
                ServerStream.State state = stream.stateLocked();
                InboundMessages inbound = stream.inboundLocked();
                if ((pending & START_PENDING) != 0) {
                    pending &= ~START_PENDING;
                    action = START;
                } else if (listener == null) {
                    idleLocked();
                    return false;
                } else if (state == ServerStream.State.CANCELLED) {
                    if ((pending & (CANCEL_DELIVERED | COMPLETE_DELIVERED)) != 0) {
                        idleLocked();
                        return stream.drainDoneLocked();
                    }
                    pending |= CANCEL_DELIVERED;
                    stream.givePartsBackLocked();
                    action = CANCEL;
                } else if (state == ServerStream.State.CLOSED) {
                    if ((pending & COMPLETE_DELIVERED) != 0) {
                        idleLocked();
                        return stream.drainDoneLocked();
                    }
                    if (!stream.trailersOutLocked()) {
                        idleLocked();
                        return false;
                    }
                    pending |= COMPLETE_DELIVERED;
                    stream.givePartsBackLocked();
                    action = COMPLETE;
                } else if (takeRequestedLocked(inbound)) {
                    message = inbound.poll();
                    compressed = inbound.polledCompressed();
                    split = inbound.polledSplit();
                    apart = inbound.polledAttachment();
                    credit = state == ServerStream.State.OPEN ? inbound.takeCredit() : 0;
                    action = MESSAGE;
                } else if (state == ServerStream.State.HALF_CLOSED_REMOTE && (pending & HALF_CLOSE_DELIVERED) == 0
                        && !inbound.hasMessage()) {
                    pending |= HALF_CLOSE_DELIVERED;
                    action = HALF_CLOSE;
                } else if ((pending & READY_PENDING) != 0) {
                    pending &= ~READY_PENDING;
                    action = READY;
                } else {
                    idleLocked();
                    return false;
                }
            }
            if (credit > 0) {
                stream.sendCredit(credit);
            }
            try {
                run(action, message, compressed, split, apart);
            } catch (RuntimeException | Error e) {
                stream.handlerFailed(e);
            }
        }
    }

    /** Runs the callback {@code action} chose (a MESSAGE with its payload) without the lock. */
    private void run(int action, SlabBuffer message, boolean compressed, int split, SlabBuffer apart) {
        switch (action) {
            case START -> start(stream.handler());
            case CANCEL -> listener.onCancel();
            case COMPLETE -> listener.onComplete();
            case MESSAGE -> deliverMessage(message, compressed, split, apart);
            case HALF_CLOSE -> listener.onHalfClose();
            case READY -> listener.onReady();
            default -> {
            }
        }
    }

    /**
     * Lets the handler (or the interceptors in front of it) start the call; core's single-request handler, unwrapped
     * ({@link ReleasingHandler}), lets the stream be recycled once the call ended. When it throws or returns no
     * listener, the call fails and gets a listener that ignores everything, so the drain still ends the call and frees
     * what it holds.
     */
    private void start(ServerCallHandler<ReqT, RespT> handler) {
        Listener<ReqT> l = null;
        try {
            // with none received, the handler's own instance, as received metadata always is (or null if it takes it)
            Metadata received = stream.requestHeaders();
            Metadata headers = received != null ? received : NullForEmptyMetadata.emptyFor(handler);
            l = handler.startCall(stream, headers); // the handler, or an interceptor in front of it, may keep the call
            if (l == null) {
                throw new NullPointerException("startCall of " + stream.getMethodDescriptor().getFullMethodName()
                        + " returned no listener");
            }
        } finally {
            synchronized (stream) {
                listener = l != null ? l : new Listener<>() {
                };
                if (l != null && handler instanceof ReleasingHandler) {
                    stream.allowRecyclingLocked();
                }
            }
        }
    }

    private void deliverMessage(SlabBuffer buf, boolean compressed, int split, SlabBuffer apart) {
        ReqT value;
        Attachment attachment = null;
        try {
            if (split >= 0) {
                attachment = Attachments.received(buf, split, apart);
            }
            value = parse(buf, compressed, split, attachment, apart);
        } catch (RuntimeException e) {
            Status s = Status.fromThrowable(e);
            stream.abort(s.getCode() != Status.Code.UNKNOWN ? s
                    : Status.INTERNAL.withDescription("failed to parse the request: " + e));
            return;
        }
        if (attachment != null) {
            listener.onMessage(value, attachment);
        } else {
            listener.onMessage(value);
        }
    }

    /** Without the lock: a request as the handler gets it; {@code attachment} is the one received with it, or null. */
    private ReqT parse(SlabBuffer buf, boolean compressed, int split, Attachment attachment, SlabBuffer apart) {
        Marshaller<ReqT> marshaller = stream.getMethodDescriptor().getRequestMarshaller();
        if (split >= 0) {
            return Attachments.parse(marshaller, buf, split, compressed, attachment, apart);
        }
        return Gzip.parseOwned(marshaller, buf, compressed,
                compressed && Gzip.named(stream.requestHeaders(), Gzip.ENCODING), stream.conn.settings.maxMessageSize());
    }
}
