package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.ClientCall.Listener;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.connection.Connection;

/**
 * The delivery of one client call's callbacks: its listener (or the observer of a call started by
 * {@link ClientStream#runUnary}), what is pending for it (response headers, a ready transition, the end), and the
 * loop that hands them over one at a time, chosen under the stream's lock and run outside it on the call's executor.
 * Its {@link CallDrain} part starts the runs and counts the responses asked for. The stream keeps the call's state
 * machine and tells this what happened through its {@code ...Locked} methods, always with the stream's lock held.
 */
final class ClientDelivery<RespT> extends CallDrain {
    private static final int HEADERS = 1, MESSAGE = 2, CLOSE = 3, READY = 4;
    /** What is pending, the bits of {@link #pending}. */
    private static final int HEADERS_PENDING = 1, READY_PENDING = 1 << 1, LISTENER_CLOSED = 1 << 2;

    /** The listener of a call started by {@link ClientStream#runUnary}: marks that it has one, and is never called. */
    private static final Listener<Object> TO_UNARY_OBSERVER = new Listener<>() {
    };

    private final ClientStream<?, RespT> stream;
    /** The listener; for a call started by {@link ClientStream#runUnary}, {@link #TO_UNARY_OBSERVER}, never called. */
    private Listener<RespT> listener;
    /** The observer a call started by {@link ClientStream#runUnary} ends into, else null. */
    private StreamObserver<RespT> unaryObserver;
    /** The response of a call started by {@link ClientStream#runUnary}, once it came. */
    private RespT unaryValue;
    /** Response headers received and not yet delivered (null when they carried no entries). */
    private Metadata pendingHeaders;
    private int pending;

    ClientDelivery(ClientStream<?, RespT> stream) {
        super(stream);
        this.stream = stream;
    }

    /** With the lock held, at start: the call's listener, or {@code observer} for a call started by runUnary. */
    void listenLocked(Listener<RespT> l, StreamObserver<RespT> observer) {
        if (observer != null) {
            @SuppressWarnings("unchecked")
            Listener<RespT> none = (Listener<RespT>) TO_UNARY_OBSERVER;
            l = none;
        }
        this.listener = l;
        this.unaryObserver = observer;
    }

    /** With the lock held: asks for a run once the call has a listener; true when the caller must {@link #start} it. */
    boolean requestIfListeningLocked() {
        return listener != null && requestLocked();
    }

    /** With the lock held: response headers to deliver ({@code md}, null for none); true when a run must start. */
    boolean headersLocked(Metadata md) {
        pending |= HEADERS_PENDING;
        pendingHeaders = md;
        return requestIfListeningLocked();
    }

    /** With the lock held: the call became ready to send; true when a run must start. */
    boolean readyLocked() {
        pending |= READY_PENDING;
        return requestIfListeningLocked();
    }

    @Override
    void resetLocked() {
        super.resetLocked();
        listener = null;
        unaryObserver = null;
        unaryValue = null;
        pendingHeaders = null;
        pending = 0;
    }

    /** One callback at a time, chosen under the stream's lock and run outside it; true when it must recycle. */
    @Override
    boolean deliverUntilIdle() {
        while (true) {
            int action;
            Metadata headers = null;
            SlabBuffer message = null;
            boolean compressed = false;
            int split = -1;
            SlabBuffer apart = null;
            int credit = 0;
            Status closeStatus = null;
            Metadata closeTrailers = null;
            synchronized (stream) {
                InboundMessages inbound = stream.inboundLocked();
                Status s = stream.closeStatusLocked();
                if ((pending & LISTENER_CLOSED) != 0) {
                    idleLocked();
                    return stream.drainDoneLocked();
                }
                if ((pending & HEADERS_PENDING) != 0) {
                    pending &= ~HEADERS_PENDING;
                    headers = pendingHeaders;
                    pendingHeaders = null;
                    action = HEADERS;
                } else if (s != null && ((!s.isOk() && !stream.closedByServerLocked()) || !inbound.hasMessage())) {
                    pending |= LISTENER_CLOSED;
                    closeStatus = s;
                    closeTrailers = stream.closeTrailersLocked();
                    stream.givePartsBackLocked();
                    action = CLOSE;
                } else if (takeRequestedLocked(inbound)) {
                    message = inbound.poll();
                    compressed = inbound.polledCompressed();
                    split = inbound.polledSplit();
                    apart = inbound.polledAttachment();
                    credit = stream.remoteClosedLocked() ? 0 : inbound.takeCredit();
                    action = MESSAGE;
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
            switch (action) {
                case HEADERS -> deliverHeaders(headers);
                case MESSAGE -> deliverMessage(message, compressed, split, apart);
                case CLOSE -> deliverClose(closeStatus, closeTrailers);
                case READY -> deliverReady();
                default -> {
                }
            }
        }
    }

    private void deliverHeaders(Metadata headers) {
        if (unaryObserver != null) {
            return; // a unary observer takes no headers
        }
        try {
            listener.onHeaders(headers != null ? headers : NullForEmptyMetadata.emptyFor(listener));
        } catch (RuntimeException e) {
            stream.listenerThrew(e);
        }
    }

    private void deliverMessage(SlabBuffer buf, boolean compressed, int split, SlabBuffer apart) {
        RespT value;
        Attachment attachment = null;
        try {
            if (split >= 0) {
                attachment = Attachments.received(buf, split, apart);
            }
            value = stream.parseResponse(buf, compressed, split, attachment, apart);
        } catch (RuntimeException e) {
            stream.responseUnreadable(e);
            return;
        }
        try {
            if (unaryObserver != null) {
                try {
                    takeUnaryResponse(value);
                } finally {
                    if (attachment != null) {
                        attachment.release(); // a plain observer takes the message alone, as a listener's default does
                    }
                }
            } else if (attachment != null) {
                listener.onMessage(value, attachment);
            } else {
                listener.onMessage(value);
            }
        } catch (RuntimeException e) {
            stream.listenerThrew(e);
        }
    }

    /** A response of a call started by runUnary: kept for onClose; a second one cancels the call. */
    private void takeUnaryResponse(RespT value) {
        if (unaryValue != null) {
            stream.cancel(UnaryObserverClose.SECOND_RESPONSE, null);
        } else {
            unaryValue = value;
        }
    }

    private void deliverClose(Status s, Metadata trailers) {
        stream.countFinished(s);
        try {
            StreamObserver<RespT> direct = unaryObserver;
            if (direct != null) {
                RespT value = unaryValue;
                unaryValue = null;
                UnaryObserverClose.close(direct, s, trailers, value);
            } else {
                listener.onClose(s, trailers != null ? trailers : NullForEmptyMetadata.emptyFor(listener));
            }
        } catch (RuntimeException e) {
            Connection.LOG.log(System.Logger.Level.WARNING, "ClientCall.Listener.onClose threw", e);
        }
    }

    private void deliverReady() {
        if (unaryObserver != null) {
            return; // a unary observer has no request side to tell
        }
        try {
            listener.onReady();
        } catch (RuntimeException e) {
            stream.listenerThrew(e);
        }
    }
}
