package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.server.ServerConnection;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The server side of one call, its state machine: starts the handler, takes the frames from the connection
 * (reassembling requests into its {@link InboundMessages}), enforces the deadline, and ends the call, with its
 * callbacks delivered in order on the server's executor, never under this call's lock, by its {@link ServerDelivery}
 * (its {@link CallDrain}, also the send side's attachment-failure hook, {@link #attachmentFailedLocked}). The send side
 * (response headers, messages, trailers) and the ServerCall getters are {@link ServerStreamSender}'s, the class this
 * one extends: the same object, so one lock. The protocol state is {@link State}, as in the stream state diagram of
 * PROTOCOL.md. A call whose handler is core's single-request one, unwrapped ({@link ReleasingHandler}),
 * goes back to its connection's {@link RecycledStreams} for the connection's next call once its response observer let
 * it go ({@link #released}), its drain delivered the end, and it left the connection (its {@link Recycling}).
 * Frames name the stream id, and a deadline expiry the call it was armed for, and are dropped unless the stream is
 * still that call. State is guarded by {@code this}.
 */
public final class ServerStream<ReqT, RespT> extends ServerStreamSender<ReqT, RespT>
        implements CallDrain.Owner, ReleasableCall {
    /**
     * The step a call must take for its stream to go back to its connection's pool ({@link Recycling#allow}): its
     * handler is core's single-request one, unwrapped (no interceptor holds the call: {@link ReleasingHandler}).
     */
    private static final int CORE_HANDLER = 1;
    /**
     * The parties done with a call before its stream is recycled: the response observer let the call go
     * ({@link #released}); the drain delivered the call's end and went idle; the stream left its connection's
     * tables ({@link #removeFromConnection} returned from the connection).
     */
    private static final int OBSERVER = 0, DRAIN = 1, LEFT = 2;

    /** The reassembler, from the connection's {@link StreamParts}; null once given back when the call ended. */
    private InboundMessages inbound;
    /** Delivers the call's callbacks, one at a time, outside its lock; the send side's attachment-failure hook. */
    private final ServerDelivery<ReqT, RespT> drain = new ServerDelivery<>(this);
    /** Only for a call with a deadline, which it keeps (no field of its own); kept when the stream is recycled. */
    private CallTimer deadlineTimer;
    /** Set once a call on this stream started core's handler unwrapped ({@link #CORE_HANDLER}): when it may serve the next. */
    private Recycling recycling;
    private long startNanos;

    public ServerStream(ServerConnection conn, int id, ServerMethodDefinition<ReqT, RespT> definition, Metadata requestHeaders,
                 String authority, long timeoutNanos, boolean halfClosed) {
        super(conn);
        begin(id, definition, requestHeaders, authority, timeoutNanos, halfClosed);
    }

    /**
     * Readies a stream from the connection's pool for the call opened as {@code newId}; on the connection's I/O
     * thread, the only thread that reuses its streams.
     */
    @SuppressWarnings("unchecked")
    public void reuse(int newId, ServerMethodDefinition<?, ?> newDefinition, Metadata newHeaders, String newAuthority,
               long timeoutNanos, boolean halfClosed) {
        begin(newId, (ServerMethodDefinition<ReqT, RespT>) newDefinition, newHeaders, newAuthority, timeoutNanos, halfClosed);
    }

    /**
     * A new call's fields, as the constructor sets them and as {@link #reuse} sets them again; its deadline (from
     * {@code timeoutNanos}, 0 for none) on the timer kept from an earlier call, if any.
     */
    private synchronized void begin(int newId, ServerMethodDefinition<ReqT, RespT> newDefinition, Metadata newHeaders,
                                    String newAuthority, long timeoutNanos, boolean halfClosed) {
        if (timeoutNanos > 0 && deadlineTimer == null) {
            deadlineTimer = new CallTimer(this::deadlineExpired);
        }
        if (deadlineTimer != null) {
            deadlineTimer.deadline(timeoutNanos > 0 ? Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS) : null);
        }
        this.id = newId;
        this.definition = newDefinition;
        this.requestHeaders = newHeaders;
        this.gzipResponses = false;
        this.authority = newAuthority;
        this.startNanos = System.nanoTime();
        this.outbound = conn.parts.takeOutbound();
        this.inbound = conn.parts.takeInbound();
        inbound.limitAttachments(conn.server.attachmentLimit(newDefinition));
        outbound.onAttachmentFailed(drain);
        this.state = halfClosed ? State.HALF_CLOSED_REMOTE : State.OPEN;
        this.flags = (short) (halfClosed ? CLIENT_ENDED : 0);
        drain.beginLocked();
    }

    /** The response observer lets the call go: it will not reach the stream again. */
    @Override
    public void released() {
        done(OBSERVER);
    }

    /** Without the lock: {@code party} is done with the stream; the last of them recycles it. */
    private void done(int party) {
        boolean recycle;
        synchronized (this) {
            recycle = doneLocked(party);
        }
        if (recycle) {
            recycle();
        }
    }

    /** With the lock held: {@code party} is done with the stream; true when it was the last and must recycle it. */
    private boolean doneLocked(int party) {
        return recycling != null && recycling.done(party);
    }

    /** Clears the call's fields (its parts were given back when its end was chosen) and keeps it for the next call. */
    @Override
    public void recycle() {
        synchronized (this) {
            id = 0;
            definition = null;
            requestHeaders = null;
            authority = null;
            flags = 0;
            drain.resetLocked();
            finalStatus = null;
            cancelled = false;
            state = State.CANCELLED; // as an ended call while kept: anything that still reaches it does nothing
            if (deadlineTimer != null) {
                deadlineTimer.deadline(null);
            }
        }
        conn.recycled().give(this);
    }

    public int id() {
        return id;
    }

    /** The stream's protocol state (for tests). */
    synchronized State state() {
        return state;
    }

    /** Binds the send side and schedules the handler's start. Called on the I/O thread. */
    public void start() {
        conn.server.metrics().callStarted(method().getFullMethodName(), conn.out.transportName());
        boolean run;
        synchronized (this) {
            if (state == State.CANCELLED) {
                // the connection closed under the call before it started: its drain has ended it (and may have
                // given its parts back), so there is nothing to bind or time
                return;
            }
            var peer = conn.peerHello;
            outbound.bind(conn.out, conn.sendWindow, id, peer.initialWindow(),
                    Math.min(conn.out.preferredChunkSize(), peer.maxFramePayload()));
            set(WAS_READY, outbound.isReady());
            Deadline deadline = getDeadline();
            if (deadline != null) {
                deadlineTimer.arm(deadline.remainingNanos(), recycling == null ? 0 : recycling.generation());
            }
            run = drain.requestLocked();
        }
        if (run) {
            drain.start();
        }
    }

    // ------------------------------------------------------------------ ServerCall API: demand and the deadline

    @Override
    public void request(int n) {
        if (n <= 0) {
            if (n < 0) {
                throw new IllegalArgumentException("request count must not be negative: " + n);
            }
            return; // asking for none is a no-op, as in grpc-java
        }
        int credit = 0;
        boolean run;
        synchronized (this) {
            drain.addRequestedLocked(n);
            if (state == State.OPEN && drain.wantsMoreLocked(inbound)) {
                inbound.onDemand();
                credit = inbound.takeCredit();
            }
            run = drain.requestLocked();
        }
        if (credit > 0) {
            sendCredit(credit);
        }
        if (run) {
            drain.start();
        }
    }

    /** Without the lock: grants the client {@code credit} more bytes of requests (a WINDOW frame). */
    void sendCredit(int credit) {
        conn.send(Frames.window(pool(), id, credit), true);
    }

    @Override
    public Deadline getDeadline() {
        return deadlineTimer == null ? null : deadlineTimer.deadline();
    }

    // ------------------------------------------------------------------ frames (I/O thread)

    /**
     * A MESSAGE frame whose payload is {@code length} bytes of {@code memory} at {@code offset}, lying in
     * {@code holder} when not null; returns whether a reference to the holder was kept.
     */
    public boolean onMessageFrame(int streamId, int flags, MemorySegment memory, SlabBuffer holder, long offset, int length) {
        int credit = 0;
        boolean kept;
        boolean tooLarge = false;
        boolean run = false;
        synchronized (this) {
            if (id != streamId) {
                conn.messageDropped(flags, memory, offset, length);
                return false; // ended and recycled since the connection found it
            }
            requireClientOpenLocked("MESSAGE");
            boolean endStream = (flags & FrameFlags.END_STREAM) != 0;
            if (endStream) {
                set(CLIENT_ENDED);
            }
            if (state != State.OPEN) {
                conn.messageDropped(flags, memory, offset, length);
                return false; // closed here: frames in flight are dropped
            }
            if (endStream) {
                state = State.HALF_CLOSED_REMOTE;
            }
            conn.server.metrics().bytesReceived(length);
            int r = inbound.onFrame(flags, memory, holder, offset, length, drain.wantsMoreLocked(inbound));
            kept = inbound.keptHolder();
            if (r == InboundMessages.OVER_WINDOW) {
                tooLarge = cancelLocked(Status.RESOURCE_EXHAUSTED.withDescription("request message of "
                        + inbound.rejectedSize() + " bytes refused: " + inbound.refusal()));
                conn.server.metrics().limitRefused("connection_memory");
            } else if (r == InboundMessages.TOO_LARGE) {
                // cancelled under this lock, so a drain cannot deliver a half-close (END_STREAM came with it) first
                tooLarge = cancelLocked(Status.RESOURCE_EXHAUSTED.withDescription(inbound.rejectedAttachment()
                        ? Attachments.refused(method().getFullMethodName(), inbound.rejectedSize(), inbound.attachmentLimit())
                        : "request message of " + inbound.rejectedSize()
                                + " bytes exceeds the server's maximum inbound message size " + conn.settings.maxMessageSize()));
            } else {
                credit = endStream ? 0 : inbound.takeCredit();
            }
            run = drain.requestLocked();
            tooLarge = claimLeavingLocked(tooLarge);
        }
        if (credit > 0) {
            conn.send(Frames.window(pool(), streamId, credit), true);
        }
        afterEnded(tooLarge, run);
        return kept;
    }

    /** The client's END_STREAM; returns true when it is late (the call has ended here), for the caller to charge. */
    public boolean onEndStream(int streamId) {
        boolean run;
        synchronized (this) {
            if (id != streamId) {
                return true;
            }
            requireClientOpenLocked("END_STREAM");
            set(CLIENT_ENDED);
            if (endedLocked()) {
                return true;
            }
            if (state != State.OPEN) {
                return false;
            }
            state = State.HALF_CLOSED_REMOTE;
            run = drain.requestLocked();
        }
        if (run) {
            drain.start();
        }
        return false;
    }

    /** The client's WINDOW; returns true when it is late (the call has ended here), for the caller to charge. */
    public boolean onWindow(int streamId, int increment) {
        return gainSendRoom(streamId, true, increment);
    }

    /**
     * With the lock held: a {@code frame} after the client's END_STREAM is a protocol error that closes the connection
     * (PROTOCOL.md, "Stream states"), whatever this side's state.
     */
    private void requireClientOpenLocked(String frame) {
        if (has(CLIENT_ENDED)) {
            throw new ProtocolException(frame + " after END_STREAM on stream " + id);
        }
    }

    /**
     * With the lock held: whether a frame for {@code streamId} finds the call ended here (cancelled, or closed with its
     * TRAILERS handed to the transport) or the stream already serving another call. Such a frame is late whether or
     * not the stream has left its connection's table yet, so the connection charges it the same either way.
     */
    private boolean endedLocked(int streamId) {
        return id != streamId || endedLocked();
    }

    /** With the lock held: cancelled, or closed with its TRAILERS handed to the transport. */
    private boolean endedLocked() {
        return state == State.CANCELLED || (state == State.CLOSED && (outbound == null || outbound.isEmpty()));
    }

    /** The connection can take more again after it was not writable. */
    public void onConnectionWritable() {
        gainSendRoom(-1, false, 0);
    }

    /**
     * The send side got room, from a WINDOW ({@code fromWindow}, granting {@code increment}) or from the connection
     * draining: sends what waited, wakes senders, updates readiness, and ends the call once its queued TRAILERS are out.
     */
    private boolean gainSendRoom(int streamId, boolean fromWindow, int increment) {
        boolean remove;
        boolean run;
        synchronized (this) {
            if (streamId != -1 && endedLocked(streamId)) {
                return true;
            }
            if (state == State.CANCELLED || outbound == null) {
                return false;
            }
            if (fromWindow) {
                outbound.onWindow(increment);
            } else {
                outbound.onConnectionWritable();
            }
            outbound.wakeWaiters(this);
            run = updateReadinessLocked();
            boolean failed = attachmentFailedLocked();
            remove = failed || (state == State.CLOSED && outbound.isEmpty());
            if (remove) {
                // ended by the failure, or the TRAILERS queued behind flow-controlled data are out: deliver the end
                run |= drain.requestLocked();
            }
            remove = claimLeavingLocked(remove);
        }
        afterEnded(remove, run);
        return false;
    }

    /** The client cancelled (CANCEL frame); returns true when it is late (the call has ended here), for the caller to charge. */
    public boolean onClientCancel(int streamId, Status s) {
        boolean run;
        boolean leave;
        synchronized (this) {
            if (endedLocked(streamId)) {
                return true;
            }
            cancelLocked(null);
            run = drain.requestLocked();
            leave = claimLeavingLocked(true);
        }
        afterEnded(leave, run);
        return false;
    }

    /** The connection closed under the call. */
    public void connectionClosed() {
        cancelInternal(null);
    }

    /**
     * The deadline timer armed for call {@code generation} expired: ends the call, unless the stream serves a later
     * call by now (checked and ended in one hold of the lock, so the call cannot be recycled in between).
     */
    void deadlineExpired(int generation) {
        boolean changed;
        boolean run;
        synchronized (this) {
            if (recycling != null && !recycling.isGeneration(generation)) {
                return;
            }
            changed = cancelLocked(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded on the server after "
                    + String.format(java.util.Locale.ROOT, "%.3fs", (System.nanoTime() - startNanos) / 1e9)));
            run = changed && drain.requestLocked();
            changed = claimLeavingLocked(changed);
        }
        afterEnded(changed, run);
    }

    /** Ends the call from the server side: tells the client the status and the handler it is cancelled. */
    @Override
    public void abort(Status status) {
        cancelInternal(status);
    }

    private void cancelInternal(Status tellClient) {
        boolean changed;
        boolean run;
        synchronized (this) {
            changed = cancelLocked(tellClient);
            run = changed && drain.requestLocked();
            changed = claimLeavingLocked(changed);
        }
        afterEnded(changed, run);
    }

    @Override
    boolean requestDrainLocked() {
        return drain.requestLocked();
    }

    @Override
    void trailersSendingLocked() {
        conn.trailersSending(this);
    }

    @Override
    boolean claimLeavingLocked(boolean ended) {
        if (!ended || has(REMOVED)) {
            return false;
        }
        set(REMOVED);
        return true;
    }

    /** Without the lock, after this caller claimed the call's leaving ({@code leave}): leaves the connection, and starts the drain. */
    @Override
    void afterEnded(boolean leave, boolean run) {
        if (leave) {
            removeFromConnection();
        }
        if (run) {
            drain.start();
        }
    }

    /** With the lock held: moves to CANCELLED and tells the client; false if the call had already ended. */
    @Override
    boolean cancelLocked(Status tellClient) {
        if (endedLocked()) {
            return false;
        }
        state = State.CANCELLED;
        cancelled = true;
        disarmDeadlineLocked();
        outbound.discard();
        if (tellClient != null && !conn.isClosed()) {
            finalStatus = tellClient.getCode().name();
            trailersSendingLocked();
            conn.send(conn.trailers(id, tellClient, null), true);
        } else if (finalStatus == null) {
            finalStatus = Status.Code.CANCELLED.name();
        }
        outbound.wakeWaiters(this);
        return true;
    }

    /** The server's executor refused to run this call's callbacks: the call fails, and what it holds is freed. */
    private void executorRejected(java.util.concurrent.RejectedExecutionException e) {
        // not recycled: the drain that is dead never reports itself done
        Connection.LOG.log(System.Logger.Level.WARNING, "the server executor rejected the callbacks of "
                + method().getFullMethodName() + "; failing the call", e);
        cancelInternal(Status.UNAVAILABLE.withDescription("the server could not run the call: its executor rejected it ("
                + e.getMessage() + ")"));
        synchronized (this) {
            if (inbound != null) {
                inbound.releaseAll();
            }
        }
    }

    /**
     * Takes the ended call off its connection, once per call (the caller claimed it, {@link #claimLeavingLocked}): the
     * stream cannot be recycled before this says it left ({@code LEFT}), so the call's fields still hold here.
     */
    private void removeFromConnection() {
        conn.remove(this);
        conn.server.metrics().callFinished(method().getFullMethodName(), conn.out.transportName(),
                finalStatus == null ? "OK" : finalStatus, System.nanoTime() - startNanos);
        done(LEFT);
    }

    // ------------------------------------------------------------------ delivery

    /** With the lock held: notes a ready transition; true when a drain must start. */
    @Override
    boolean updateReadinessLocked() {
        boolean ready = isOpenLocked() && outbound.isReady();
        boolean run = false;
        if (ready && !has(WAS_READY)) {
            run = drain.readyLocked();
        }
        set(WAS_READY, ready);
        return run;
    }

    @Override
    public java.util.concurrent.Executor drainExecutor() {
        return conn.server.executor();
    }

    @Override
    public void drainRejected(java.util.concurrent.RejectedExecutionException e) {
        executorRejected(e);
    }

    // ------------------------------------------------------------------ what its delivery asks (ServerDelivery)

    /** With the lock held: the stream's protocol state. */
    State stateLocked() {
        return state;
    }

    /** With the lock held: the reassembler of the requests (null once given back). */
    InboundMessages inboundLocked() {
        return inbound;
    }

    /** With the lock held, once closed: whether the TRAILERS are out (nothing queued before them any more). */
    boolean trailersOutLocked() {
        return outbound.isEmpty();
    }

    /** With the lock held: the delivery ended the call's callbacks and went idle; true when it must recycle it. */
    boolean drainDoneLocked() {
        return doneLocked(DRAIN);
    }

    /** The call's handler. */
    dev.rdmarpc.core.ServerCallHandler<ReqT, RespT> handler() {
        return definition.handler();
    }

    /** The client's metadata, or null when it sent none. */
    Metadata requestHeaders() {
        return requestHeaders;
    }

    /**
     * With the lock held: the call's handler is core's single-request one, unwrapped ({@link ReleasingHandler}), so
     * once its response observer let the call go the stream may serve the connection's next call ({@link Recycling}).
     */
    void allowRecyclingLocked() {
        if (recycling == null) {
            recycling = new Recycling(CORE_HANDLER, 3);
        }
        recycling.allow(CORE_HANDLER);
    }

    @Override
    void disarmDeadlineLocked() {
        if (deadlineTimer != null) {
            deadlineTimer.disarm();
        }
    }

    /**
     * With the lock held, once onCancel or onComplete is chosen: gives the flow-control parts back to the connection
     * for its next call. Every later event (a late frame, request, a WINDOW, the connection becoming writable) finds the
     * call ended before it would touch them, and the fields are cleared first, so this call keeps no reference to parts
     * another call may now hold. A send side still queueing (cancelled mid-message) or with a waiting sender is left
     * to the garbage collector instead.
     */
    void givePartsBackLocked() {
        InboundMessages in = inbound;
        OutboundFlow out = outbound;
        inbound = null;
        outbound = null;
        if (in != null) {
            conn.parts.recycle(in);
        }
        if (out != null) {
            conn.parts.recycle(out);
        }
    }

    /**
     * With the lock held, after the send side ran: fails the call when the send side reported that an attachment
     * failed (its segment closed, or its memory refused); true when it did, and the caller must then leave the
     * connection and start the drain once its lock is released ({@link #afterEnded}).
     */
    @Override
    boolean attachmentFailedLocked() {
        Status s = drain.takeAttachmentFailureLocked();
        return s != null && cancelLocked(s);
    }

    /** Without the lock: the handler (or a listener) threw {@code e}: the call ends with it, unless it ended already. */
    void handlerFailed(Throwable e) {
        Connection.LOG.log(System.Logger.Level.DEBUG, "handler of " + method().getFullMethodName() + " threw", e);
        String message = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
        synchronized (this) {
            if (!isOpenLocked()) {
                return;
            }
        }
        Status s = e instanceof dev.rdmarpc.core.StatusException se ? se.getStatus() : Status.UNKNOWN.withDescription(message);
        abort(s);
    }

    @Override
    public String toString() {
        ServerMethodDefinition<ReqT, RespT> d = definition; // null while kept for a later call
        return "ServerStream{" + (d == null ? "idle" : d.method().getFullMethodName()) + ", id=" + id + "}";
    }
}
