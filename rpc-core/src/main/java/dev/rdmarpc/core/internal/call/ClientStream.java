package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameTooLargeException;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.Executor;

/**
 * The client side of one call: its state machine. What it sends (HEADERS, messages, END_STREAM under flow control) is
 * its {@link ClientSendSide}'s; finding a connection and a stream slot on it its {@link ClientStreamOpener}'s; the
 * delivery of its callbacks, in order on the call's executor and never under this call's lock, its
 * {@link ClientDelivery}'s (its {@link CallDrain}, also the send side's attachment-failure hook,
 * {@link #attachmentFailedLocked}). Each is guarded by this stream's lock and called by it alone: none calls back into
 * the stream, they return what the stream decides on. The protocol state is {@link State}, as in the stream state
 * diagram of PROTOCOL.md (kept in two bits of the flags). Every unary call core starts itself runs through
 * {@link #runUnary}, ending straight into its observer with no listener object; a stream the channel made for its
 * unary entry ({@link ChannelImpl#startPooledUnary}), which nobody outside core ever holds, has a {@link Recycling}
 * that gives it back once its starter and its drain are done with it and it left its connection, if it opened on the
 * caller's thread and ended by the server's TRAILERS (the only paths that leave no reference behind). Every event from
 * a connection names the connection and the stream id it was for and is dropped unless the stream is still that one,
 * so a stale reference cannot reach the stream's next call. All state is guarded by {@code this}.
 *
 * <p>Over 600 lines: what is left is the call's state machine alone, each method one transition over the same guarded
 * fields (the state and flags, the status, the connection and id): the ClientCall API, the frames from the
 * connection, the opener's outcomes and the one way a call ends ({@link #finishLocked}).
 */
public final class ClientStream<ReqT, RespT> extends ClientCall<ReqT, RespT>
        implements CallDrain.Owner, NullForEmptyMetadata, DirectUnaryCall<ReqT, RespT>, FlagBits {
    /** The client side's stream states (PROTOCOL.md, "Stream states"). */
    enum State {
        /** Started, no HEADERS sent yet (waiting for a connection). */
        IDLE,
        /** HEADERS sent; both directions open. */
        OPEN,
        /** END_STREAM sent: this side sends nothing more. */
        HALF_CLOSED_LOCAL,
        /** TRAILERS received, CANCEL sent, deadline, or the connection lost: the call has its status. */
        CLOSED
    }

    private final ChannelImpl channel;
    /** Set at creation, and again when a recycled stream is reused ({@link #reuse}). */
    private MethodDescriptor<ReqT, RespT> method;
    private CallOptions options;
    /** What the call sends: request metadata, the held request, the send side's flow control. */
    private final ClientSendSide sendSide;
    /** What the call receives: the responses' reassembly, credit and parse. */
    private final ClientReceiveSide receiveSide;
    /** Delivers the call's callbacks, one at a time, outside its lock; the send side's attachment-failure hook. */
    private final ClientDelivery<RespT> drain = new ClientDelivery<>(this);
    /** Only for a call with a deadline, which it keeps (no field of its own); armed at start, kept when recycled. */
    private CallTimer deadlineTimer;
    /** Only for a stream of the channel's unary entry ({@link ChannelImpl#startPooledUnary}): when it may serve the next call. */
    private final Recycling recycling;

    private ClientConnection conn;
    /** Set when the call ended on a connection it has yet to leave ({@link #leaveConnection}). */
    private ClientConnection detachFrom;
    /** Finds the stream a connection and a stream slot on it. */
    private final ClientStreamOpener opener;
    private int id;
    /** The call's yes/no state, bits of {@link #STARTED} and the other constants below ({@link FlagBits}). */
    private short flags;

    /** {@link #start} was called. */
    private static final int STARTED = 1;
    /** {@link #halfClose} was called. */
    private static final int HALF_CLOSE_REQUESTED = 1 << 1;
    /** The server ended the stream (TRAILERS or CANCEL) or the transport lost it: it sends nothing more. */
    private static final int REMOTE_CLOSED = 1 << 2;
    private static final int HEADERS_RECEIVED = 1 << 3;
    private static final int WAS_READY = 1 << 4;
    /** The status came in the server's TRAILERS: messages received before it are still delivered. */
    private static final int CLOSED_BY_SERVER = 1 << 5;
    /** Where the stream's {@link State} is kept in {@link #flags}: its ordinal, in the two bits above the flags. */
    private static final int STATE_SHIFT = 6;
    private static final int STATE_MASK = 0b11 << STATE_SHIFT;
    /**
     * The steps a pooled call must take to be recycled ({@link Recycling#allow}): opened on a connection from the
     * caller's thread (no connect future nor a connection's waiting queue holds it), and ended by the server's
     * TRAILERS (no timer, transport failure or caller still ending it on another thread).
     */
    private static final int OPENED_INLINE = 1, ENDED_BY_SERVER = 2;
    /**
     * The parties done with a pooled call before it is recycled: {@link #runUnary} returned; the drain delivered
     * onClose and went idle; the stream left its connection's table ({@link #leaveConnection}; until then the thread
     * that ended the call still has to take it off, so its fields must stay as they are).
     */
    private static final int CALLER = 0, DRAIN = 1, LEFT = 2;
    private static final State[] STATES = State.values();
    private Status closeStatus;
    /** The trailers onClose gets, or null when there are none (an instance is made then, unless the listener takes null). */
    private Metadata closeTrailers;
    private long startNanos;
    private boolean counted;

    /** A new stream; {@code recyclable} only for the channel's unary entry, whose streams nobody outside core holds. */
    public ClientStream(ChannelImpl channel, MethodDescriptor<ReqT, RespT> method, CallOptions options, boolean recyclable) {
        this.channel = channel;
        this.opener = new ClientStreamOpener(channel, this);
        this.sendSide = new ClientSendSide(channel);
        this.receiveSide = new ClientReceiveSide(channel);
        this.recycling = recyclable ? new Recycling(OPENED_INLINE | ENDED_BY_SERVER, 3) : null;
        begin(method, options);
    }

    /** Readies a stream taken from the channel's pool for a new call; it is as a new stream (see {@link #recycle}). */
    public synchronized void reuse(MethodDescriptor<ReqT, RespT> newMethod, CallOptions newOptions) {
        begin(newMethod, newOptions);
    }

    /**
     * A new call's fields, as the constructor sets them and as {@link #reuse} sets them again: its method, options and
     * deadline (on the timer kept from an earlier call, if any), and a send side and a reassembler from the channel's
     * {@link StreamParts}.
     */
    private void begin(MethodDescriptor<ReqT, RespT> newMethod, CallOptions newOptions) {
        this.method = newMethod;
        this.options = newOptions;
        Deadline d = newOptions.getDeadline();
        if (channel.defaultTimeout() != null) {
            d = Deadline.earliest(d, Deadline.after(channel.defaultTimeout()));
        }
        if (d != null && deadlineTimer == null) {
            deadlineTimer = new CallTimer(this::deadlineExpired);
        }
        if (deadlineTimer != null) {
            deadlineTimer.deadline(d);
        }
        sendSide.begin(drain);
        receiveSide.begin();
    }

    /**
     * A unary call core starts itself: starts it with no request headers of its own and {@code observer} in place of
     * a listener, asks for the response, sends {@code request} and half-closes; the call ends into the observer as
     * {@link UnaryObserverClose#close} says. On a recyclable stream, the stream goes back to the channel's pool once
     * this has returned, the observer has been told how the call ended, and the stream has left its connection;
     * whichever of the three comes last recycles it.
     */
    @Override
    public void runUnary(ReqT request, StreamObserver<RespT> observer) {
        try {
            start(null, observer, null);
            request(2);
            sendMessage(request);
            halfClose();
        } catch (RuntimeException | Error e) {
            cancel("exception while starting the call or sending its request", e);
            throw e;
        } finally {
            done(CALLER);
        }
    }

    /** Without the lock: {@code party} is done with a pooled stream; the last of them recycles it. */
    private void done(int party) {
        boolean recycle;
        synchronized (this) {
            recycle = doneLocked(party);
        }
        if (recycle) {
            recycle();
        }
    }

    /** With the lock held: {@code party} is done with a pooled stream; true when it was the last and must recycle it. */
    private boolean doneLocked(int party) {
        return recycling != null && recycling.done(party);
    }

    /**
     * Clears every field (its flow-control parts were given back when onClose was chosen) and gives the stream to the
     * channel's pool. Only once nothing else can reach it: its starter returned, its drain ended, and it left its
     * connection's table (a frame or a snapshot that found it there before is checked against the connection and
     * the id, {@link #isStreamLocked}).
     */
    @Override
    public void recycle() {
        synchronized (this) {
            assert detachFrom == null : "recycled before it left its connection: " + this;
            opener.resetLocked();
            method = null;
            options = null;
            conn = null;
            detachFrom = null;
            id = 0;
            flags = 0;
            drain.resetLocked();
            sendSide.reset();
            closeStatus = null;
            closeTrailers = null;
            startNanos = 0;
            counted = false;
            if (deadlineTimer != null) {
                deadlineTimer.deadline(null);
            }
        }
        channel.recycled().give(this);
    }

    /** The call's deadline, or null for none (kept by its timer). */
    private Deadline deadline() {
        CallTimer t = deadlineTimer;
        return t == null ? null : t.deadline();
    }

    /** With the lock held: whether an event from {@code from} for {@code streamId} is for this stream as it is now. */
    private boolean isStreamLocked(ClientConnection from, int streamId) {
        return conn == from && id == streamId;
    }

    /** The executor of the call's callbacks: the call's own, else the channel's (derived, not a field: a smaller call). */
    private Executor executor() {
        Executor e = options.getExecutor();
        return e != null ? e : channel.executor();
    }

    private SlabPool pool() {
        return channel.pool();
    }

    @Override
    public short flagBits() {
        return flags;
    }

    @Override
    public void flagBits(short bits) {
        flags = bits;
    }

    /** The stream's protocol state (for tests): two bits of {@link #flags}. */
    synchronized State state() {
        return STATES[(flags & STATE_MASK) >>> STATE_SHIFT];
    }

    /** With the lock held: the stream moves to {@code next} (PROTOCOL.md's diagram). */
    private void moveTo(State next) {
        flags = (short) ((flags & ~STATE_MASK) | (next.ordinal() << STATE_SHIFT));
    }

    public int id() {
        return id;
    }

    public void assignId(int newId) {
        this.id = newId;
    }

    // ------------------------------------------------------------------ ClientCall API

    @Override
    public void start(Listener<RespT> l, Metadata headers) {
        start(l, null, headers);
    }

    private void start(Listener<RespT> l, StreamObserver<RespT> observer, Metadata headers) {
        synchronized (this) {
            if (has(STARTED)) {
                throw new IllegalStateException("call already started");
            }
            set(STARTED);
            drain.listenLocked(l, observer);
            this.startNanos = System.nanoTime();
            sendSide.requestHeaders(headers, options); // null (from core's own callers, or an application) sends none
        }
        counted = channel.callStarted();
        if (counted) {
            channel.metrics().callStarted(method.getFullMethodName(), null);
        }
        if (!counted) {
            finish(Status.UNAVAILABLE.withDescription("channel to " + channel.authority() + " is shut down"), false);
            return;
        }
        Deadline deadline = deadline();
        if (deadline != null) {
            long remaining = deadline.remainingNanos();
            if (remaining <= 0) {
                finish(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded before the call was sent"), false);
                return;
            }
            synchronized (this) {
                deadlineTimer.arm(remaining, recycling == null ? 0 : recycling.generation());
            }
        }
        opener.connect(0);
    }

    /** Without the lock: fails the call before it reached the server (nothing to cancel there). */
    void fail(Status s) {
        finish(s, false);
    }

    /** With the lock held: fails the call before it reached the server; true when a drain must start ({@link #afterUnlock}). */
    boolean failLocked(Status s) {
        return finishLocked(s, null, false);
    }

    /** With the lock held: whether the call has its status. */
    boolean isClosedLocked() {
        return closeStatus != null;
    }

    /** With the lock held: why {@code c}'s server would refuse the request metadata (RESOURCE_EXHAUSTED), or null. */
    Status metadataRefusalLocked(ClientConnection c) {
        return sendSide.metadataRefusal(c);
    }

    /** With the lock held: whether the HEADERS are flushed as they open the stream ({@link ClientSendSide#headersGoAlone}). */
    boolean headersGoAloneLocked() {
        return sendSide.headersGoAlone(has(HALF_CLOSE_REQUESTED), method.getType().clientSendsOneMessage());
    }

    /**
     * With the lock held: the connection {@code c} registered the stream and sent its HEADERS ({@code inline}: on the
     * caller's thread, see {@link #OPENED_INLINE}); binds the send side and sends what waited. True when a drain must
     * start ({@link #afterUnlock}).
     */
    boolean openedLocked(ClientConnection c, boolean inline) {
        if (inline && recycling != null) {
            recycling.allow(OPENED_INLINE);
        }
        this.conn = c;
        moveTo(State.OPEN);
        sendSide.bind(c, id);
        boolean refused = has(HALF_CLOSE_REQUESTED) && sendHalfClose();
        return updateReadinessLocked() | refused | attachmentFailedLocked();
    }

    /**
     * Without the lock, after a locked step asked for a drain: leaves the connection (a no-op unless the call ended,
     * e.g. the held request's attachment was refused) and starts the drain.
     */
    void afterUnlock() {
        afterEnd(true);
    }

    /** The connection this stream waited on reserved it a slot: open it there now. */
    public void slotReady(ClientConnection c) {
        opener.slotReady(c);
    }

    /** The connection this stream waited on closed or is going away before the stream was sent: use another one. */
    public void retryElsewhere() {
        opener.retryElsewhere();
    }

    /** Fails the call here and cancels it on the server (a response the client refuses, e.g. oversized metadata). */
    public void failLocally(ClientConnection from, int streamId, Status s) {
        ended(from, streamId, s, true);
    }

    /**
     * The HEADERS frame opening this stream as {@code streamId}; called by the connection under its lock.
     *
     * @throws FrameTooLargeException when it would exceed the server's max frame payload {@code maxPayload}
     */
    public SlabBuffer encodeHeaders(int streamId, int maxPayload) {
        return sendSide.encodeHeaders(streamId, maxPayload, method, deadline());
    }

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
            if (conn != null && !has(REMOTE_CLOSED) && closeStatus == null
                    && drain.wantsMoreLocked(receiveSide.messages())) {
                credit = receiveSide.onDemand();
            }
            run = requestDrainIfListeningLocked();
        }
        if (credit > 0) {
            sendCredit(credit);
        }
        if (run) {
            drain.start();
        }
    }

    /** Without the lock: grants the server {@code credit} more bytes of responses (a WINDOW frame). */
    void sendCredit(int credit) {
        conn.sendControl(Frames.window(pool(), id, credit));
    }

    @Override
    public void sendMessage(ReqT message) {
        send(options.getCompressor() != null ? Gzip.frame(pool(), method.getRequestMarshaller(), message)
                : MessageFramer.frame(pool(), method.getRequestMarshaller(), message), null);
    }

    @Override
    public void sendMessage(ReqT message, MemorySegment attachment, Runnable onReleased) {
        OutgoingAttachment att = OutgoingAttachment.of(attachment, onReleased);
        send(Attachments.frame(pool(), method.getRequestMarshaller(), message, att), att);
    }

    /** Sends a framed request, with its attachment or null; takes ownership of both. */
    private void send(SlabBuffer framed, OutgoingAttachment att) {
        channel.metrics().bytesSent(framed.length() - MessageFramer.PREFIX + (att == null ? 0 : att.size()));
        boolean run;
        synchronized (this) {
            String misuse = !has(STARTED) ? "sendMessage before start"
                    : has(HALF_CLOSE_REQUESTED) ? "sendMessage after halfClose" : null;
            if (misuse != null || closeStatus != null) {
                Attachments.drop(framed, att);
                if (misuse != null) {
                    throw new IllegalStateException(misuse);
                }
                return;
            }
            if (method.getType().clientSendsOneMessage()) {
                if (!sendSide.hold(framed, att)) {
                    throw new IllegalStateException(method.getType() + " call takes exactly one request message");
                }
                return;
            }
            Status refused = sendSide.send(framed, att, this, () -> closeStatus != null);
            run = refused != null ? finishLocked(refused, null, true)
                    : closeStatus == null && (updateReadinessLocked() | attachmentFailedLocked());
        }
        if (run) {
            afterUnlock(); // leaves the connection only if the attachment was refused or failed and ended the call
        }
    }

    @Override
    public void halfClose() {
        boolean run;
        synchronized (this) {
            if (!has(STARTED)) {
                throw new IllegalStateException("halfClose before start");
            }
            if (has(HALF_CLOSE_REQUESTED)) {
                throw new IllegalStateException("halfClose called twice");
            }
            set(HALF_CLOSE_REQUESTED);
            if (closeStatus != null || !sendSide.isBound()) {
                return;
            }
            run = sendHalfClose() | attachmentFailedLocked();
        }
        if (run) {
            afterUnlock();
        }
    }

    /** With the lock held: half-closes, with the held single request if any; true when that failed the call (drain). */
    private boolean sendHalfClose() {
        moveTo(State.HALF_CLOSED_LOCAL);
        Status refused = sendSide.halfClose(id);
        return refused != null && finishLocked(refused, null, true);
    }

    @Override
    public void cancel(String message, Throwable cause) {
        Status s = Status.CANCELLED.withDescription(message != null ? message : "call cancelled by the client");
        if (cause != null) {
            s = s.withCause(cause);
        }
        finish(s, true);
    }

    @Override
    public boolean isReady() {
        synchronized (this) {
            return closeStatus == null && sendSide.isReady();
        }
    }

    /**
     * The deadline timer armed for call {@code generation} expired: ends the call, unless the stream serves a later
     * call by now (checked and ended in one hold of the lock, so the call cannot be recycled in between).
     */
    void deadlineExpired(int generation) {
        boolean run;
        synchronized (this) {
            if (recycling != null && !recycling.isGeneration(generation)) {
                return;
            }
            double secs = (System.nanoTime() - startNanos) / 1e9;
            run = finishLocked(Status.DEADLINE_EXCEEDED.withDescription(String.format(Locale.ROOT,
                    "deadline exceeded after %.3fs%s", secs, opener.whereLocked(conn))), null, true);
        }
        afterEnd(run);
    }

    // ------------------------------------------------------------------ frames (I/O thread)

    /** Response HEADERS, with their metadata or null when they carried none. */
    public void onHeaders(ClientConnection from, int streamId, Metadata md) {
        boolean run;
        synchronized (this) {
            if (!isStreamLocked(from, streamId)) {
                return;
            }
            if (has(HEADERS_RECEIVED)) {
                throw new ProtocolException("second HEADERS on stream " + id);
            }
            set(HEADERS_RECEIVED);
            if (closeStatus != null) {
                return;
            }
            run = drain.headersLocked(ClientReceiveSide.headers(options, md));
        }
        if (run) {
            drain.start();
        }
    }

    /**
     * A MESSAGE frame whose payload is {@code length} bytes of {@code memory} at {@code offset}, lying in
     * {@code holder} when not null; returns whether a reference to the holder was kept.
     */
    public boolean onMessageFrame(ClientConnection from, int streamId, int flags, MemorySegment memory, SlabBuffer holder,
                           long offset, int length) {
        if ((flags & FrameFlags.END_STREAM) != 0) {
            throw new ProtocolException("END_STREAM flag on a MESSAGE from a server");
        }
        int credit = 0;
        boolean kept;
        boolean run;
        boolean tooLarge;
        synchronized (this) {
            if (!isStreamLocked(from, streamId)) {
                return false;
            }
            if (has(REMOTE_CLOSED)) {
                throw new ProtocolException("MESSAGE after TRAILERS on stream " + id);
            }
            if (closeStatus != null) {
                return false;
            }
            int r = receiveSide.onFrame(flags, memory, holder, offset, length,
                    drain.wantsMoreLocked(receiveSide.messages()));
            kept = receiveSide.keptHolder();
            tooLarge = r == InboundMessages.TOO_LARGE;
            if (tooLarge) {
                run = finishLocked(receiveSide.tooLarge(), null, true);
            } else {
                run = r == InboundMessages.COMPLETED && requestDrainIfListeningLocked();
                credit = receiveSide.takeCredit();
            }
        }
        if (credit > 0) {
            from.sendControl(Frames.window(pool(), streamId, credit));
        }
        if (tooLarge) {
            leaveConnection(); // the call ended here: only then is there a connection to leave
        }
        if (run) {
            drain.start();
        }
        return kept;
    }

    /**
     * TRAILERS: the call's status, and its metadata or null when they carried none. Marked as the server's and ended
     * in one hold of the lock, so that the end is the server's exactly when this frame ended the call.
     */
    public void onTrailers(ClientConnection from, int streamId, Status status, Metadata md) {
        boolean run;
        synchronized (this) {
            if (!isStreamLocked(from, streamId)) {
                return;
            }
            if (has(REMOTE_CLOSED)) {
                throw new ProtocolException("second TRAILERS on stream " + id);
            }
            set(REMOTE_CLOSED | CLOSED_BY_SERVER);
            if (closeStatus == null && recycling != null) {
                recycling.allow(ENDED_BY_SERVER);
            }
            run = finishLocked(status, ClientReceiveSide.trailers(options, md), false);
        }
        afterEnd(run);
    }

    public void onServerCancel(ClientConnection from, int streamId, Status s) {
        ended(from, streamId, s, false);
    }

    /**
     * The call on {@code from} as {@code streamId} (any id when it is -1) ends with {@code s}: failed here and cancelled
     * on the server ({@code here}), else ended by the server or the transport.
     */
    private void ended(ClientConnection from, int streamId, Status s, boolean here) {
        boolean run;
        synchronized (this) {
            if (conn != from || (streamId != -1 && id != streamId)) {
                return;
            }
            if (!here) {
                set(REMOTE_CLOSED);
            }
            run = finishLocked(here ? s : pastDeadlineLocked(s), null, here);
        }
        afterEnd(run);
    }

    /**
     * With the lock held: how a call ended by the peer reports {@code s}. A CANCELLED once the call's deadline has passed
     * is DEADLINE_EXCEEDED, as grpc-java's client reports it: the server runs the deadline it was sent too (gRPC's
     * {@code grpc-timeout}), and its timer may fire and reset the stream before this side's timer has run.
     */
    private Status pastDeadlineLocked(Status s) {
        Deadline d = deadline();
        if (s.getCode() != Status.Code.CANCELLED || d == null || !d.isExpired()) {
            return s;
        }
        return Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded; the server cancelled the call"
                + (s.getDescription() != null ? ": " + s.getDescription() : ""));
    }

    public void onWindow(ClientConnection from, int streamId, int increment) {
        gainSendRoom(from, streamId, true, increment);
    }

    /** The connection {@code from} can take more again after it was not writable. */
    public void onConnectionWritable(ClientConnection from) {
        gainSendRoom(from, -1, false, 0);
    }

    /**
     * The send side got room, from a WINDOW ({@code fromWindow}, granting {@code increment}) or from the connection
     * draining ({@code streamId} -1: any stream of {@code from}).
     */
    private void gainSendRoom(ClientConnection from, int streamId, boolean fromWindow, int increment) {
        boolean run;
        synchronized (this) {
            if (conn != from || (streamId != -1 && id != streamId) || closeStatus != null) {
                return;
            }
            if (fromWindow) {
                sendSide.onWindow(increment, this);
            } else {
                sendSide.onConnectionWritable(this);
            }
            run = updateReadinessLocked() | attachmentFailedLocked();
        }
        if (run) {
            afterUnlock(); // leaves the connection only if an attachment failed and ended the call
        }
    }

    /**
     * The connection {@code from} failed or is going away without this stream (it takes no new streams by then, so the
     * connection identifies the stream's call).
     */
    public void transportFailed(ClientConnection from, Status s) {
        ended(from, -1, s, false);
    }

    // ------------------------------------------------------------------ completion and delivery

    private void finish(Status s, boolean tellServer) {
        boolean run;
        synchronized (this) {
            run = finishLocked(s, null, tellServer);
        }
        afterEnd(run);
    }

    /** Without the lock, after a locked step that may have ended the call: leaves the connection, starts the drain if {@code run}. */
    private void afterEnd(boolean run) {
        leaveConnection();
        if (run) {
            drain.start();
        }
    }

    /** Without the lock, after {@link #finishLocked}: takes the ended stream off its connection. */
    private void leaveConnection() {
        ClientConnection c;
        synchronized (this) {
            c = detachFrom;
            detachFrom = null;
        }
        if (c != null) {
            c.remove(this);
            done(LEFT);
        }
    }

    /** With the lock held: the call ends with {@code s}; true when a drain must start to deliver onClose. */
    private boolean finishLocked(Status s, Metadata trailers, boolean tellServer) {
        if (closeStatus != null) {
            return false;
        }
        moveTo(State.CLOSED);
        closeStatus = s;
        closeTrailers = trailers;
        if (!has(CLOSED_BY_SERVER)) {
            // ended here or by the transport: undelivered responses are dropped now, not when (if ever)
            // the listener's executor next runs (the call is not recycled: ENDED_BY_SERVER was not allowed)
            receiveSide.releaseAll();
        }
        if (deadlineTimer != null) {
            deadlineTimer.disarm();
        }
        sendSide.discard(this);
        opener.stopWaitingLocked();
        ClientConnection c = conn;
        if (c != null) {
            if (tellServer && !has(REMOTE_CLOSED)) {
                c.sendControl(Frames.cancel(pool(), id, s));
            }
            // left after the lock is released: leaving may hand this stream's slot to a waiting stream, which opens
            // (and may run its callbacks) on this thread
            detachFrom = c;
        }
        return requestDrainIfListeningLocked();
    }

    /** With the lock held: notes a ready transition; true when a drain must start. */
    private boolean updateReadinessLocked() {
        boolean ready = closeStatus == null && sendSide.isReady();
        boolean run = false;
        if (ready && !has(WAS_READY)) {
            run = drain.readyLocked();
        }
        set(WAS_READY, ready);
        return run;
    }

    /** With the lock held: asks for a drain once the call has a listener; true when the caller must start it. */
    private boolean requestDrainIfListeningLocked() {
        return drain.requestIfListeningLocked();
    }

    @Override
    public Executor drainExecutor() {
        return executor();
    }

    /**
     * The call's executor refused to run its callbacks: the call ends (the server is told) and frees what it holds;
     * its listener cannot be called any more.
     */
    @Override
    public void drainRejected(java.util.concurrent.RejectedExecutionException e) {
        Connection.LOG.log(System.Logger.Level.WARNING, "the executor of a call to " + method.getFullMethodName()
                + " rejected its callbacks; cancelling the call, whose listener will not be called", e);
        finish(Status.CANCELLED.withDescription("the call's executor rejected its callbacks: " + e.getMessage()).withCause(e),
                true);
        synchronized (this) {
            receiveSide.releaseAll();
        }
    }

    // ------------------------------------------------------------------ what its delivery asks (ClientDelivery)

    /** With the lock held: the call's status, or null while it runs. */
    Status closeStatusLocked() {
        return closeStatus;
    }

    /** With the lock held: the trailers onClose gets, or null for none. */
    Metadata closeTrailersLocked() {
        return closeTrailers;
    }

    /** With the lock held: whether the status came in the server's TRAILERS (responses before it still count). */
    boolean closedByServerLocked() {
        return has(CLOSED_BY_SERVER);
    }

    /** With the lock held: whether the server sends nothing more (no credit to grant it). */
    boolean remoteClosedLocked() {
        return has(REMOTE_CLOSED);
    }

    /** With the lock held: the reassembler of the responses (null once given back). */
    InboundMessages inboundLocked() {
        return receiveSide.messages();
    }

    /** With the lock held: the delivery ended the call's callbacks and went idle; true when it must recycle it. */
    boolean drainDoneLocked() {
        return doneLocked(DRAIN);
    }

    /** Without the lock, as onClose is delivered: the call counts as finished with {@code s}. */
    void countFinished(Status s) {
        if (counted) {
            channel.metrics().callFinished(method.getFullMethodName(), null, s.getCode().name(),
                    System.nanoTime() - startNanos);
            channel.callFinished();
        }
    }

    /**
     * With the lock held, once onClose is chosen: gives the flow-control parts back to the channel for its next call.
     * Every later event (a late frame, request, cancel, a WINDOW) finds the call closed before it would touch them, and
     * the fields are cleared first, so this call keeps no reference to parts another call may now hold.
     */
    void givePartsBackLocked() {
        receiveSide.givePartsBack();
        sendSide.givePartsBack();
    }

    /**
     * With the lock held, after the send side ran: ends the call when the send side reported that an attachment
     * failed (its segment closed, or its memory refused); true when a drain must start. The caller leaves the
     * connection and starts the drain once its lock is released, so the listener hears it after unlock.
     */
    private boolean attachmentFailedLocked() {
        Status s = drain.takeAttachmentFailureLocked();
        return s != null && finishLocked(s, null, true);
    }

    /** Without the lock: a response as the listener gets it; {@code attachment} is the one received with it, or null. */
    RespT parseResponse(SlabBuffer buf, boolean compressed, int split, dev.rdmarpc.core.Attachment attachment,
                        SlabBuffer apart) {
        return receiveSide.parse(method, options, buf, compressed, split, attachment, apart);
    }

    /** Without the lock: a response could not be parsed ({@code e}): the call ends with the failure. */
    void responseUnreadable(RuntimeException e) {
        Status s = Status.fromThrowable(e);
        if (s.getCode() == Status.Code.UNKNOWN) {
            s = Status.INTERNAL.withDescription("failed to parse the response: " + e).withCause(e);
        }
        synchronized (this) {
            if (closeStatus != null && closeStatus.isOk() && has(CLOSED_BY_SERVER)) {
                // the server's OK arrived before this message was parsed: the call ends with the failure instead
                closeStatus = s;
                closeTrailers = null;
                receiveSide.releaseAll();
                return;
            }
        }
        finish(s, true);
    }

    /** Without the lock: the listener threw {@code e}: the call is cancelled. */
    void listenerThrew(RuntimeException e) {
        finish(Status.CANCELLED.withDescription("the call's listener threw: " + e).withCause(e), true);
    }

    @Override
    public String toString() {
        MethodDescriptor<ReqT, RespT> m = method; // null while kept for a later call
        return "ClientStream{" + (m == null ? "idle" : m.getFullMethodName()) + ", id=" + id + "}";
    }
}
