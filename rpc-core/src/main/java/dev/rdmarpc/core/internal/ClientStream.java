package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ResponseMetadata;
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
 * The client side of one call: sends HEADERS and messages under flow control, reassembles
 * responses, and has its callbacks delivered in order on the call's executor, never under this call's lock, by its
 * {@link ClientDelivery} (its {@link CallDrain}, also the send side's attachment-failure hook,
 * {@link #attachmentFailedLocked}). The protocol
 * state is {@link State}, as in the stream state diagram of PROTOCOL.md (kept in two bits of the flags). A plain
 * async unary call started through {@link #startUnary} ends straight into its observer, with no listener object. A
 * generated stub's async unary call runs on a stream from the channel's {@link RecycledStreams} ({@link #runPooledUnary}):
 * nobody outside core ever holds it, and its {@link Recycling} gives it back once its starter and its drain are done
 * with it and it left its connection, if it opened on the caller's thread and ended by the server's TRAILERS (the
 * only paths that leave no reference behind). Every event from a connection names the connection and the stream id it was for and is dropped
 * unless the stream is still that one, so a stale reference cannot reach the stream's next call. Finding a connection
 * and a stream slot on it is its {@link ClientStreamOpener}'s. All state is guarded by {@code this}.
 *
 * <p>Over 600 lines: what is left is the call's state machine alone (the opening is {@link ClientStreamOpener}'s, the
 * delivery {@link ClientDelivery}'s, recycling {@link Recycling}'s): the ClientCall API, the frames from the
 * connection, and the one way a call ends ({@link #finishLocked}), each a transition over the same guarded fields
 * (the state, the held request, the send side, the connection); split further, one transition would span classes.
 */
public final class ClientStream<ReqT, RespT> extends ClientCall<ReqT, RespT>
        implements CallDrain.Owner, NullForEmptyMetadata, DirectUnaryCall<RespT>, FlagBits {
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
    /** The send side, from the channel's {@link StreamParts}; null once given back after onClose. */
    private OutboundFlow outbound;
    /** The reassembler, from the channel's {@link StreamParts}; null once given back after onClose. */
    private InboundMessages inbound;
    /** Delivers the call's callbacks, one at a time, outside its lock; the send side's attachment-failure hook. */
    private final ClientDelivery<RespT> drain = new ClientDelivery<>(this);
    /** Only for a call with a deadline, which it keeps (no field of its own); armed at start, kept when recycled. */
    private CallTimer deadlineTimer;
    /** Set only on the pooled path ({@link #runPooledUnary}): when the stream may serve the channel's next call. */
    private Recycling recycling;

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
     * The parties done with a pooled call before it is recycled: {@link #runPooledUnary} returned; the drain delivered
     * onClose and went idle; the stream left its connection's table ({@link #leaveConnection}; until then the thread
     * that ended the call still has to take it off, so its fields must stay as they are).
     */
    private static final int CALLER = 0, DRAIN = 1, LEFT = 2;
    private static final State[] STATES = State.values();
    /** The metadata sent in HEADERS, or null for none. */
    private Metadata requestHeaders;
    private Status closeStatus;
    /** The trailers onClose gets, or null when there are none (an instance is made then, unless the listener takes null). */
    private Metadata closeTrailers;
    private SlabBuffer heldSingleRequest;
    private OutgoingAttachment heldAttachment;
    private long startNanos;
    private boolean counted;

    public ClientStream(ChannelImpl channel, MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        this.channel = channel;
        this.opener = new ClientStreamOpener(channel, this);
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
        this.outbound = channel.parts().takeOutbound();
        this.inbound = channel.parts().takeInbound();
        outbound.onAttachmentFailed(drain);
    }

    /**
     * A generated stub's async unary call on a stream only core holds (from the channel's pool, or new): starts it,
     * sends the request and half-closes, as {@code ClientCalls} does for a call it was given. The stream may go back
     * to the pool once this has returned, the observer has been told how the call ended, and the stream has left its
     * connection; whichever of the three comes last recycles it.
     */
    public void runPooledUnary(ReqT request, StreamObserver<RespT> observer) {
        synchronized (this) {
            if (recycling == null) {
                recycling = new Recycling(OPENED_INLINE | ENDED_BY_SERVER, 3);
            }
        }
        try {
            startUnary(observer);
            sendMessage(request);
            halfClose();
        } catch (RuntimeException | Error e) {
            cancel("exception while sending the request", e);
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
            requestHeaders = null;
            closeStatus = null;
            closeTrailers = null;
            heldSingleRequest = null;
            heldAttachment = null;
            startNanos = 0;
            counted = false;
            if (deadlineTimer != null) {
                deadlineTimer.deadline(null);
            }
        }
        channel.recycle(this);
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

    /** The stream's protocol state (for tests and logs): two bits of {@link #flags}. */
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

    /** Starts a plain async unary call that ends into {@code observer}, with no listener object, and asks for the response. */
    @Override
    public void startUnary(StreamObserver<RespT> observer) {
        start(null, observer, null);
        request(2);
    }

    private void start(Listener<RespT> l, StreamObserver<RespT> observer, Metadata headers) {
        synchronized (this) {
            if (has(STARTED)) {
                throw new IllegalStateException("call already started");
            }
            set(STARTED);
            drain.listenLocked(l, observer);
            this.startNanos = System.nanoTime();
        }
        Metadata md = headers; // null (from core's own callers, or an application) sends none
        if (options.getHeaders() != null) {
            if (md == null) {
                md = new Metadata();
            }
            md.merge(options.getHeaders());
        }
        if (options.getCompressor() != null) {
            md = Gzip.encodingNamed(md);
            md.put(Gzip.ACCEPT_ENCODING, Gzip.NAME);
        }
        this.requestHeaders = md;
        counted = channel.callStarted();
        if (counted) {
            channel.metrics().callStarted(method.getFullMethodName(), null);
        }
        if (!counted) {
            finish(Status.UNAVAILABLE.withDescription("channel to " + channel.authority() + " is shut down"), null, false);
            return;
        }
        Deadline deadline = deadline();
        if (deadline != null) {
            long remaining = deadline.remainingNanos();
            if (remaining <= 0) {
                finish(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded before the call was sent"), null, false);
                return;
            }
            synchronized (this) {
                deadlineTimer.arm(remaining, recycling == null ? 0 : recycling.generation());
            }
        }
        opener.connect();
    }

    /** Without the lock: fails the call before it reached the server (nothing to cancel there). */
    void fail(Status s) {
        finish(s, null, false);
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
        long metadataBytes = Frames.metadataBytes(requestHeaders);
        int peerMax = c.peerLimits().maxMetadataBytes();
        if (metadataBytes <= peerMax) {
            return null;
        }
        return Status.RESOURCE_EXHAUSTED.withDescription("request metadata of " + metadataBytes
                + " bytes (keys and values plus " + Frames.METADATA_ENTRY_OVERHEAD + " per entry) exceeds the "
                + peerMax + " bytes the server at " + channel.authority() + " accepts; the call was not sent");
    }

    /**
     * With the lock held: whether the HEADERS are flushed as they open the stream. A call that sends one request sends
     * it next, flushed with its END_STREAM: the HEADERS go with it.
     */
    boolean headersGoAloneLocked() {
        return !(heldSingleRequest != null || !outbound.isEmpty() || has(HALF_CLOSE_REQUESTED)
                || method.getType().clientSendsOneMessage());
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
        var peer = c.peerSettings();
        outbound.bind(c.out, c.sendWindow, id, peer.initialWindow(),
                Math.min(c.out.preferredChunkSize(), peer.maxFramePayload()));
        boolean refused = has(HALF_CLOSE_REQUESTED) && sendHalfClose();
        return updateReadinessLocked() | refused | attachmentFailedLocked();
    }

    /**
     * Without the lock, after a locked step asked for a drain: leaves the connection (a no-op unless the call ended,
     * e.g. the held request's attachment was refused) and starts the drain.
     */
    void afterUnlock() {
        leaveConnection();
        drain.start();
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
        boolean run;
        synchronized (this) {
            if (!isStreamLocked(from, streamId)) {
                return;
            }
            run = finishLocked(s, null, true);
        }
        leaveConnection();
        if (run) {
            drain.start();
        }
    }

    /**
     * The HEADERS frame opening this stream as {@code streamId}; called by the connection under its lock.
     *
     * @throws FrameTooLargeException when it would exceed the server's max frame payload {@code maxPayload}
     */
    public SlabBuffer encodeHeaders(int streamId, int maxPayload) {
        // the time left as it opens
        Deadline deadline = deadline();
        long timeoutNanos = deadline == null ? 0 : Math.max(1, deadline.remainingNanos());
        return Frames.requestHeaders(pool(), streamId, false, channel.encodedPath(method), channel.encodedAuthority(),
                timeoutNanos, requestHeaders, maxPayload);
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
            if (conn != null && !has(REMOTE_CLOSED) && closeStatus == null && drain.wantsMoreLocked(inbound)) {
                inbound.onDemand();
                credit = inbound.takeCredit();
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
            if (!has(STARTED)) {
                Attachments.drop(framed, att);
                throw new IllegalStateException("sendMessage before start");
            }
            if (has(HALF_CLOSE_REQUESTED)) {
                Attachments.drop(framed, att);
                throw new IllegalStateException("sendMessage after halfClose");
            }
            if (closeStatus != null) {
                Attachments.drop(framed, att);
                return;
            }
            if (method.getType().clientSendsOneMessage()) {
                if (heldSingleRequest != null) {
                    Attachments.drop(framed, att);
                    throw new IllegalStateException(method.getType() + " call takes exactly one request message");
                }
                heldSingleRequest = framed;
                heldAttachment = att;
                return;
            }
            Status refused = attachmentRefusal(att);
            if (refused != null) {
                Attachments.drop(framed, att);
                run = finishLocked(refused, null, true);
            } else {
                int need = framed.length() + (att == null ? 0 : att.size());
                if (outbound.mustAwaitRoom(need)) {
                    outbound.awaitRoom(this, need, () -> closeStatus != null);
                }
                if (closeStatus != null) {
                    Attachments.drop(framed, att);
                    return;
                }
                outbound.message(framed, att, false, true);
                run = updateReadinessLocked() | attachmentFailedLocked();
            }
        }
        if (run) {
            leaveConnection(); // a no-op unless the attachment was refused or failed and ended the call
            drain.start();
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
            if (closeStatus != null || !outbound.isBound()) {
                return;
            }
            run = sendHalfClose() | attachmentFailedLocked();
        }
        if (run) {
            leaveConnection();
            drain.start();
        }
    }

    /** With the lock held: half-closes, with the held single request if any; true when that failed the call (drain). */
    private boolean sendHalfClose() {
        moveTo(State.HALF_CLOSED_LOCAL);
        if (heldSingleRequest != null) {
            SlabBuffer b = heldSingleRequest;
            heldSingleRequest = null;
            OutgoingAttachment a = heldAttachment;
            heldAttachment = null;
            Status refused = attachmentRefusal(a);
            if (refused != null) {
                Attachments.drop(b, a);
                return finishLocked(refused, null, true);
            }
            outbound.message(b, a, true, true);
        } else {
            outbound.control(Frames.endStream(pool(), id), true);
        }
        return false;
    }

    /** With the lock held, once on a connection: why the server would refuse {@code att} (RESOURCE_EXHAUSTED), or null. */
    private Status attachmentRefusal(OutgoingAttachment att) {
        if (att == null || conn == null) {
            return null;
        }
        int peerMax = conn.peerLimits().maxAttachmentBytes();
        if (att.size() <= peerMax) {
            return null;
        }
        return Status.RESOURCE_EXHAUSTED.withDescription(peerMax < 0
                ? "the server at " + channel.authority() + " takes no attachments; the message was not sent"
                : Attachments.tooLarge("request", att.size(), peerMax) + " of the server at " + channel.authority()
                        + "; the message was not sent");
    }

    @Override
    public void cancel(String message, Throwable cause) {
        Status s = Status.CANCELLED.withDescription(message != null ? message : "call cancelled by the client");
        if (cause != null) {
            s = s.withCause(cause);
        }
        finish(s, null, true);
    }

    @Override
    public boolean isReady() {
        synchronized (this) {
            return closeStatus == null && outbound.isReady();
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
            ClientConnection waitingOn = opener.waitingOnLocked();
            String where = conn != null ? " [remote_addr=" + conn.peer() + "]"
                    : waitingOn != null ? " (waiting for one of the " + waitingOn.peerLimits().maxConcurrentStreams()
                    + " concurrent streams the server at " + channel.authority() + " allows)"
                    : " (not yet connected to " + channel.authority() + ")";
            run = finishLocked(Status.DEADLINE_EXCEEDED.withDescription(
                    String.format(Locale.ROOT, "deadline exceeded after %.3fs%s", secs, where)), null, true);
        }
        leaveConnection();
        if (run) {
            drain.start();
        }
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
            ResponseMetadata capture = options.getResponseMetadata();
            if (capture != null) {
                if (md == null) {
                    md = new Metadata();
                }
                capture.recordHeaders(md);
            }
            run = drain.headersLocked(md);
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
            channel.metrics().bytesReceived(length);
            int r = inbound.onFrame(flags, memory, holder, offset, length, drain.wantsMoreLocked(inbound));
            kept = inbound.keptHolder();
            tooLarge = r == InboundMessages.TOO_LARGE;
            if (tooLarge) {
                long size = inbound.rejectedSize();
                run = finishLocked(Status.RESOURCE_EXHAUSTED.withDescription(inbound.rejectedAttachment()
                        ? Attachments.tooLarge("response", size, channel.maxInboundAttachmentSize())
                        : "response message of " + size + " bytes exceeds the maximum inbound message size "
                                + channel.maxInboundMessageSize()), null, true);
            } else {
                run = r == InboundMessages.COMPLETED && requestDrainIfListeningLocked();
                credit = inbound.takeCredit();
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
            ResponseMetadata capture = options.getResponseMetadata();
            if (capture != null) {
                if (md == null) {
                    md = new Metadata();
                }
                capture.recordTrailers(md);
            }
            run = finishLocked(status, md, false);
        }
        leaveConnection();
        if (run) {
            drain.start();
        }
    }

    public void onServerCancel(ClientConnection from, int streamId, Status s) {
        remoteEnded(from, streamId, s);
    }

    /** The server or the transport ended the stream ({@code from} for {@code streamId}; any id when it is -1). */
    private void remoteEnded(ClientConnection from, int streamId, Status s) {
        boolean run;
        synchronized (this) {
            if (conn != from || (streamId != -1 && id != streamId)) {
                return;
            }
            set(REMOTE_CLOSED);
            run = finishLocked(s, null, false);
        }
        leaveConnection();
        if (run) {
            drain.start();
        }
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
                outbound.onWindow(increment);
            } else {
                outbound.onConnectionWritable();
            }
            outbound.wakeWaiters(this);
            run = updateReadinessLocked() | attachmentFailedLocked();
        }
        if (run) {
            leaveConnection(); // a no-op unless an attachment failed and ended the call
            drain.start();
        }
    }

    /**
     * The connection {@code from} failed or is going away without this stream (it takes no new streams by then, so the
     * connection identifies the stream's call).
     */
    public void transportFailed(ClientConnection from, Status s) {
        remoteEnded(from, -1, s);
    }

    // ------------------------------------------------------------------ completion and delivery

    private void finish(Status s, Metadata trailers, boolean tellServer) {
        boolean run;
        synchronized (this) {
            run = finishLocked(s, trailers, tellServer);
        }
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
            inbound.releaseAll();
        }
        if (deadlineTimer != null) {
            deadlineTimer.disarm();
        }
        outbound.discard();
        if (heldSingleRequest != null) {
            Attachments.drop(heldSingleRequest, heldAttachment);
            heldSingleRequest = null;
            heldAttachment = null;
        }
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
        outbound.wakeWaiters(this);
        return requestDrainIfListeningLocked();
    }

    /** With the lock held: notes a ready transition; true when a drain must start. */
    private boolean updateReadinessLocked() {
        boolean ready = closeStatus == null && outbound.isReady();
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

    @Override
    public void drainRejected(java.util.concurrent.RejectedExecutionException e) {
        executorRejected(e);
    }

    /**
     * The call's executor refused to run its callbacks: the call ends (the server is told) and frees what it holds;
     * its listener cannot be called any more.
     */
    private void executorRejected(java.util.concurrent.RejectedExecutionException e) {
        Connection.LOG.log(System.Logger.Level.WARNING, "the executor of a call to " + method.getFullMethodName()
                + " rejected its callbacks; cancelling the call, whose listener will not be called", e);
        finish(Status.CANCELLED.withDescription("the call's executor rejected its callbacks: " + e.getMessage()).withCause(e),
                null, true);
        synchronized (this) {
            if (inbound != null) {
                inbound.releaseAll();
            }
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
        return inbound;
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
        InboundMessages in = inbound;
        OutboundFlow out = outbound;
        inbound = null;
        outbound = null;
        channel.parts().recycle(in);
        channel.parts().recycle(out);
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
        if (split >= 0) {
            return Attachments.parse(method.getResponseMarshaller(), buf, split, compressed, attachment, apart);
        }
        return Gzip.parseOwned(method.getResponseMarshaller(), buf, compressed, options.getCompressor() != null,
                channel.maxInboundMessageSize());
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
                inbound.releaseAll();
                return;
            }
        }
        finish(s, null, true);
    }

    /** Without the lock: the listener threw {@code e}: the call is cancelled. */
    void listenerThrew(RuntimeException e) {
        finish(Status.CANCELLED.withDescription("the call's listener threw: " + e).withCause(e), null, true);
    }

    @Override
    public String toString() {
        MethodDescriptor<ReqT, RespT> m = method; // null while kept for a later call
        return "ClientStream{" + (m == null ? "idle" : m.getFullMethodName()) + ", id=" + id + "}";
    }
}
