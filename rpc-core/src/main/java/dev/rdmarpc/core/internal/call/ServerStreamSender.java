package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.server.ServerConnection;
import dev.rdmarpc.core.protocol.FrameTooLargeException;
import dev.rdmarpc.core.protocol.Frames;

import java.lang.foreign.MemorySegment;

/**
 * The send side of a server call and the fields of the call it reads: response headers, messages (attachments
 * included) and trailers go out through the call's {@link OutboundFlow} under flow control, and the ServerCall getters
 * answer from the same fields. {@link ServerStream} extends it with the call's state machine (the frames from the
 * connection, the ways a call ends, delivery and recycling), as grpc-java layers its abstract server stream: one object
 * per call, so one lock, {@code this}, guards the fields of both (ARCHITECTURE.md, "Locks"), and a call costs no
 * second object. What the send side needs from the state machine (ending the call, asking for a drain, readiness)
 * it asks through the abstract methods below, with the lock held or after releasing it as each says.
 */
public abstract class ServerStreamSender<ReqT, RespT> extends ServerCall<ReqT, RespT>
        implements NullForEmptyMetadata, FlagBits {
    /** The server side's stream states (PROTOCOL.md, "Stream states"). */
    enum State {
        /** HEADERS received; both directions open. */
        OPEN,
        /** END_STREAM received: the client sends nothing more. */
        HALF_CLOSED_REMOTE,
        /** The handler closed the call: TRAILERS sent, or queued behind flow-controlled messages. */
        CLOSED,
        /** Ended without the handler's TRAILERS: CANCEL received, deadline, oversize request, connection lost. */
        CANCELLED
    }

    // the call's yes/no state: the bits of flags
    static final int WAS_READY = 1;
    static final int HEADERS_SENT = 1 << 1;
    /** The handler called {@link #close} (whatever the state was then). */
    static final int CLOSE_CALLED = 1 << 2;
    /** The stream left its connection. */
    static final int REMOVED = 1 << 3;
    /**
     * The client's END_STREAM arrived (as a flag or a frame): any later MESSAGE or END_STREAM from it is a protocol
     * error, whether the call is still half-closed here or has ended since (HTTP/2's STREAM_CLOSED).
     */
    static final int CLIENT_ENDED = 1 << 4;

    final ServerConnection conn;
    /** This and the next fields up to {@link #outbound} are set by the stream for each call it serves. */
    int id;
    /** The call's method and handler; the method, pool and executor are read through it and {@link #conn}, no field each. */
    ServerMethodDefinition<ReqT, RespT> definition;
    /** The client's metadata, or null when it sent none (made only for a handler that needs an instance). */
    Metadata requestHeaders;
    /** The handler asked for gzip and the client accepts it ({@link #setCompression}): response messages are gzipped. */
    boolean gzipResponses;
    String authority;
    /** The send side, from the connection's {@link StreamParts}; null once given back when the call ended. */
    OutboundFlow outbound;

    State state;
    /** Mirrors {@code state == CANCELLED} for lock-free reads ({@link #isCancelled}). */
    volatile boolean cancelled;
    /** The call's yes/no state, bits of {@link #WAS_READY} and the other constants above ({@link FlagBits}). */
    short flags;
    /** The status code name the call ended with, for the metrics; null while it has not ended. */
    String finalStatus;

    ServerStreamSender(ServerConnection conn) {
        this.conn = conn;
    }

    @Override
    public short flagBits() {
        return flags;
    }

    @Override
    public void flagBits(short bits) {
        flags = bits;
    }

    // ------------------------------------------------------------------ what the send side asks of the state machine

    /** With the lock held: moves to CANCELLED and tells the client {@code tellClient}, if any; false if already ended. */
    abstract boolean cancelLocked(Status tellClient);

    /** With the lock held, after the send side ran: ends the call if an attachment failed; true when it did. */
    abstract boolean attachmentFailedLocked();

    /** With the lock held: notes a ready transition; true when a drain must start. */
    abstract boolean updateReadinessLocked();

    /** With the lock held: asks the call's delivery for a run; true when the caller must start it after unlock. */
    abstract boolean requestDrainLocked();

    /**
     * With the lock held, in the hold that saw the call end ({@code ended}): true for the one caller that takes it off
     * its connection. Several paths can see the same end (a close, the connection draining, a WINDOW); once the call
     * left, its stream may be recycled for another call, so the claim cannot wait until the lock is released.
     */
    abstract boolean claimLeavingLocked(boolean ended);

    /** Without the lock: leaves the connection when this caller claimed it ({@code leave}), and starts the drain ({@code run}). */
    abstract void afterEnded(boolean leave, boolean run);

    /** With the lock held: the deadline no longer applies (the call closed). */
    abstract void disarmDeadlineLocked();

    /** With the lock held: the call's TRAILERS go out now, so it no longer counts against the stream limit. */
    abstract void trailersSendingLocked();

    /** Ends the call from the server side: tells the client the status and the handler it is cancelled. */
    abstract void abort(Status status);

    MethodDescriptor<ReqT, RespT> method() {
        return definition.method();
    }

    SlabPool pool() {
        return conn.settings.pool();
    }

    /** With the lock held: neither cancelled nor closed by the handler. */
    boolean isOpenLocked() {
        return state == State.OPEN || state == State.HALF_CLOSED_REMOTE;
    }

    // ------------------------------------------------------------------ ServerCall API: the send side

    @Override
    public void sendHeaders(Metadata headers) {
        boolean failed = false;
        boolean run = false;
        synchronized (this) {
            if (has(HEADERS_SENT)) {
                throw new IllegalStateException("response headers already sent");
            }
            if (has(CLOSE_CALLED)) {
                throw new IllegalStateException("call already closed");
            }
            set(HEADERS_SENT);
            if (state == State.CANCELLED) {
                return;
            }
            if (gzipResponses) {
                headers = Gzip.encodingNamed(headers);
            }
            String tooLarge = conn.metadataOverPeerLimit(headers, "response headers");
            if (tooLarge == null) {
                try {
                    outbound.control(Frames.responseHeaders(pool(), id, headers, conn.peerHello.maxFramePayload()), false);
                    return; // the first frame of the call: no attachment is queued before it to fail
                } catch (FrameTooLargeException e) {
                    // the client could not read them: the call fails with INTERNAL, the handler sees it cancelled
                    Connection.LOG.log(System.Logger.Level.WARNING, "{0} to {1}: {2}", this, conn.peer(), e.getMessage());
                    tooLarge = e.getMessage();
                }
            }
            failed = cancelLocked(Status.INTERNAL.withDescription(tooLarge));
            run = failed && requestDrainLocked();
            failed = claimLeavingLocked(failed);
        }
        afterEnded(failed, run);
    }

    @Override
    public void sendMessage(RespT message) {
        int size = method().getResponseMarshaller().serializedSize(message) + MessageFramer.PREFIX;
        OutboundFlow reservedOn = reserveRoomBeforeFraming(size);
        try {
            send(gzipResponses ? Gzip.frame(pool(), method().getResponseMarshaller(), message)
                    : MessageFramer.frame(pool(), method().getResponseMarshaller(), message), null, reservedOn != null);
        } finally {
            if (reservedOn != null) {
                synchronized (this) {
                    reservedOn.unreserve(size);
                }
            }
        }
    }

    /**
     * Waits, before a response of {@code size} bytes is serialized, while the stream or its connection has too much
     * queued, and takes room for it on the connection in the same step ({@link OutboundFlow#awaitRoomAndReserve}): a handler
     * that waits holds no buffer, and handlers checking at the same moment cannot all pass, so what a client that
     * does not read makes the server hold is the queue, not a response per stream. Returns the flow the room was
     * taken on (to give it back once the response is queued), or null.
     */
    private synchronized OutboundFlow reserveRoomBeforeFraming(int size) {
        if (outbound != null && state != State.CANCELLED && outbound.awaitRoomAndReserve(this, size, () -> cancelled)) {
            return outbound;
        }
        return null;
    }

    @Override
    public void setCompression(String compressor) {
        boolean gzip = Gzip.requested(compressor);
        synchronized (this) {
            if (has(HEADERS_SENT)) {
                throw new IllegalStateException("setCompression after the response headers were sent");
            }
            gzipResponses = gzip && Gzip.named(requestHeaders, Gzip.ACCEPT_ENCODING);
        }
    }

    @Override
    public void sendMessage(RespT message, MemorySegment attachment, Runnable onReleased) {
        OutgoingAttachment att = OutgoingAttachment.of(attachment, onReleased);
        if (att == null) { // no attachment: a plain message (onReleased, if any, has run)
            sendMessage(message);
            return;
        }
        int peerMax = conn.peerLimits().maxAttachmentBytes();
        if (att.size() > peerMax) {
            // not sent: the client would refuse it; the call ends here as when response metadata is too large
            att.release();
            abort(Status.RESOURCE_EXHAUSTED.withDescription(peerMax < 0
                    ? "the client takes no attachments; the response was not sent"
                    : Attachments.tooLarge("response", att.size(), peerMax) + "; the client refuses it, not sent"));
            return;
        }
        send(Attachments.frame(pool(), method().getResponseMarshaller(), message, att), att, false);
    }

    /**
     * Sends a framed response, with its attachment or null; takes ownership of both. {@code roomTaken}: the caller took
     * room for it ({@link #reserveRoomBeforeFraming}), so it does not wait for room again (its own room would count).
     */
    private void send(SlabBuffer framed, OutgoingAttachment att, boolean roomTaken) {
        conn.server.metrics().bytesSent(framed.length() - MessageFramer.PREFIX + (att == null ? 0 : att.size()));
        boolean failed;
        boolean run;
        synchronized (this) {
            if (has(CLOSE_CALLED)) {
                Attachments.drop(framed, att);
                throw new IllegalStateException("sendMessage after close");
            }
            if (state == State.CANCELLED) {
                Attachments.drop(framed, att);
                return;
            }
            if (!has(HEADERS_SENT)) {
                set(HEADERS_SENT);
                outbound.control(Frames.responseHeaders(pool(), id, null), false);
            }
            int need = framed.length() + (att == null ? 0 : att.size());
            if (!roomTaken && outbound.mustAwaitRoom(need)) {
                outbound.awaitRoom(this, need, () -> cancelled);
            }
            if (state == State.CANCELLED) {
                Attachments.drop(framed, att);
                return;
            }
            outbound.message(framed, att, false, !method().getType().serverSendsOneMessage());
            failed = attachmentFailedLocked();
            run = updateReadinessLocked() | (failed && requestDrainLocked());
            failed = claimLeavingLocked(failed);
        }
        afterEnded(failed, run);
    }

    @Override
    public void close(Status status, Metadata trailers) {
        boolean remove;
        boolean run;
        synchronized (this) {
            if (has(CLOSE_CALLED)) {
                throw new IllegalStateException("call already closed");
            }
            set(CLOSE_CALLED);
            if (state == State.CANCELLED) {
                return; // the handler closed a call it had not yet heard was cancelled: nothing goes out
            }
            String tooLarge = conn.metadataOverPeerLimit(trailers, "response trailers");
            if (tooLarge != null) {
                status = Status.INTERNAL.withDescription(tooLarge + " (the call ended with " + status.getCode() + ")");
                trailers = null;
            }
            state = State.CLOSED;
            disarmDeadlineLocked();
            finalStatus = status.getCode().name();
            if (outbound.isEmpty()) {
                trailersSendingLocked(); // they go out now: the stream's slot is free for the client's next one
            }
            outbound.control(conn.trailers(id, status, trailers), true);
            boolean failed = attachmentFailedLocked(); // an attachment queued before the TRAILERS failed
            remove = claimLeavingLocked(failed || outbound.isEmpty());
            outbound.wakeWaiters(this);
            run = requestDrainLocked();
        }
        afterEnded(remove, run);
    }

    // ------------------------------------------------------------------ ServerCall API: the getters

    @Override
    public boolean isCancelled() {
        return cancelled;
    }

    @Override
    public boolean isReady() {
        synchronized (this) {
            return isOpenLocked() && outbound.isReady();
        }
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
        return definition.method();
    }

    @Override
    public String getPeer() {
        return conn.peer();
    }

    @Override
    public String getAuthority() {
        return authority;
    }

    @Override
    public dev.rdmarpc.core.PeerConnection getConnection() {
        return conn;
    }

    @Override
    public String getTransportName() {
        return conn.out.transportName();
    }

    @Override
    public java.util.List<ServiceDefinition> getServerServices() {
        return conn.server.services();
    }

}
