package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The server side of one call: starts the handler, reassembles requests, sends responses under
 * flow control, enforces the deadline, and delivers listener callbacks in order on the server's
 * executor (one drain task at a time). State is guarded by {@code this}.
 */
final class ServerStream<ReqT, RespT> extends ServerCall<ReqT, RespT> {
    private static final int NONE = 0, START = 1, CANCEL = 2, MESSAGE = 3, HALF_CLOSE = 4, COMPLETE = 5, READY = 6;

    private final ServerConnection conn;
    private final int id;
    private final ServerMethodDefinition<ReqT, RespT> definition;
    private final MethodDescriptor<ReqT, RespT> method;
    private final Executor executor;
    private final SlabPool pool;
    private final Metadata requestHeaders;
    private final String authority;
    private final Deadline deadline;
    private final OutboundFlow outbound;
    private final InboundMessages inbound;
    private final Runnable drainTask = this::drain;
    private final java.util.function.BooleanSupplier ended = () -> this.cancelled;
    private final long startNanos = System.nanoTime();

    private Listener<ReqT> listener;
    private boolean startPending = true;
    private boolean remoteHalfClosed;
    private boolean halfCloseDelivered;
    private volatile boolean cancelled;
    private boolean cancelDelivered;
    private boolean closedLocal;
    private boolean completeDelivered;
    private boolean headersSent;
    private int requested;
    private boolean readyPending;
    private boolean wasReady;
    private boolean drainScheduled;
    private boolean removed;
    private ScheduledFuture<?> deadlineTimer;
    private String finalStatus;

    ServerStream(ServerConnection conn, int id, ServerMethodDefinition<ReqT, RespT> definition, Metadata requestHeaders,
                 String authority, long timeoutNanos, boolean halfClosed) {
        this.conn = conn;
        this.authority = authority;
        this.id = id;
        this.definition = definition;
        this.method = definition.method();
        this.executor = conn.server.executor();
        this.pool = conn.settings.pool();
        this.requestHeaders = requestHeaders;
        this.deadline = timeoutNanos > 0 ? Deadline.after(timeoutNanos, TimeUnit.NANOSECONDS) : null;
        this.outbound = new OutboundFlow(pool);
        this.inbound = new InboundMessages(pool, conn.settings.maxMessageSize(), conn.settings.initialWindow());
        this.remoteHalfClosed = halfClosed;
    }

    int id() {
        return id;
    }

    /** Binds the send side and schedules the handler's start. Called on the I/O thread. */
    void start() {
        conn.server.metrics().callStarted(method.getFullMethodName());
        synchronized (this) {
            var peer = conn.peerHello;
            outbound.bind(conn.out, id, peer.initialWindow(), Math.min(conn.out.preferredChunkSize(), peer.maxFramePayload()));
            wasReady = outbound.isReady();
            if (deadline != null) {
                deadlineTimer = RpcExecutors.timer().schedule(this::onDeadline, deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            }
            schedule();
        }
    }

    // ------------------------------------------------------------------ ServerCall API

    @Override
    public void request(int n) {
        if (n <= 0) {
            throw new IllegalArgumentException("request count must be positive: " + n);
        }
        int credit = 0;
        synchronized (this) {
            requested = (int) Math.min(Integer.MAX_VALUE, (long) requested + n);
            if (requested > inbound.queued() && !remoteHalfClosed && !cancelled) {
                inbound.onDemand();
                credit = inbound.takeCredit();
            }
            schedule();
        }
        if (credit > 0) {
            conn.send(Frames.window(pool, id, credit), true);
        }
    }

    @Override
    public void sendHeaders(Metadata headers) {
        boolean changed;
        synchronized (this) {
            if (headersSent) {
                throw new IllegalStateException("response headers already sent");
            }
            if (closedLocal) {
                throw new IllegalStateException("call already closed");
            }
            headersSent = true;
            if (cancelled) {
                return;
            }
            String tooLarge = conn.metadataOverPeerLimit(headers, "response headers");
            if (tooLarge == null) {
                outbound.control(Frames.responseHeaders(pool, id, headers), false);
                return;
            }
            changed = cancelLocked(Status.INTERNAL.withDescription(tooLarge));
        }
        if (changed) {
            removeFromConnection();
        }
    }

    @Override
    public void sendMessage(RespT message) {
        SlabBuffer framed = MessageFramer.frame(pool, method.getResponseMarshaller(), message);
        conn.server.metrics().bytesSent(framed.length() - MessageFramer.PREFIX);
        synchronized (this) {
            if (closedLocal) {
                framed.release();
                throw new IllegalStateException("sendMessage after close");
            }
            if (cancelled) {
                framed.release();
                return;
            }
            if (!headersSent) {
                headersSent = true;
                outbound.control(Frames.responseHeaders(pool, id, null), false);
            }
            outbound.awaitRoom(this, framed.length(), ended);
            if (cancelled) {
                framed.release();
                return;
            }
            outbound.message(framed, false, !method.getType().serverSendsOneMessage());
            updateReadiness();
        }
    }

    @Override
    public void close(Status status, Metadata trailers) {
        boolean remove;
        synchronized (this) {
            if (closedLocal) {
                throw new IllegalStateException("call already closed");
            }
            closedLocal = true;
            if (deadlineTimer != null) {
                deadlineTimer.cancel(false);
            }
            if (cancelled) {
                return;
            }
            String tooLarge = conn.metadataOverPeerLimit(trailers, "response trailers");
            if (tooLarge != null) {
                status = Status.INTERNAL.withDescription(tooLarge + " (the call ended with " + status.getCode() + ")");
                trailers = null;
            }
            finalStatus = status.getCode().name();
            if (outbound.isEmpty()) {
                conn.trailersSending(this); // they go out now: the stream's slot is free for the client's next one
            }
            outbound.control(Frames.trailers(pool, id, status, trailers), true);
            remove = outbound.isEmpty();
            outbound.wakeWaiters(this);
            schedule();
        }
        if (remove) {
            removeFromConnection();
        }
    }

    @Override
    public boolean isCancelled() {
        return cancelled;
    }

    @Override
    public boolean isReady() {
        synchronized (this) {
            return !cancelled && !closedLocal && outbound.isReady();
        }
    }

    @Override
    public Deadline getDeadline() {
        return deadline;
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
        return method;
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

    // ------------------------------------------------------------------ frames (I/O thread)

    /** A MESSAGE frame whose payload is {@code length} bytes of {@code memory} at {@code offset}. */
    void onMessageFrame(int flags, MemorySegment memory, long offset, int length) {
        int credit;
        boolean tooLarge = false;
        synchronized (this) {
            if (remoteHalfClosed) {
                throw new ProtocolException("MESSAGE after END_STREAM on stream " + id);
            }
            if ((flags & FrameFlags.END_STREAM) != 0) {
                remoteHalfClosed = true;
            }
            if (cancelled || closedLocal) {
                return;
            }
            conn.server.metrics().bytesReceived(length);
            int r = inbound.onFrame(flags, memory, offset, length, requested > inbound.queued());
            if (r == InboundMessages.TOO_LARGE) {
                // cancelled under this lock, so a drain cannot deliver a half-close (END_STREAM came with it) first
                tooLarge = cancelLocked(Status.RESOURCE_EXHAUSTED.withDescription("request message of "
                        + inbound.rejectedSize() + " bytes exceeds the server's maximum inbound message size "
                        + conn.settings.maxMessageSize()));
                credit = 0;
            } else {
                credit = inbound.takeCredit();
                schedule();
            }
        }
        if (tooLarge) {
            removeFromConnection();
            return;
        }
        if (credit > 0) {
            conn.send(Frames.window(pool, id, credit), true);
        }
    }

    void onEndStream() {
        synchronized (this) {
            if (remoteHalfClosed) {
                throw new ProtocolException("second END_STREAM on stream " + id);
            }
            remoteHalfClosed = true;
            schedule();
        }
    }

    void onWindow(int increment) {
        boolean remove;
        synchronized (this) {
            if (cancelled) {
                return;
            }
            outbound.onWindow(increment);
            outbound.wakeWaiters(this);
            updateReadiness();
            remove = closedLocal && outbound.isEmpty();
            if (remove) {
                schedule(); // the TRAILERS queued behind flow-controlled data are out: deliver onComplete
            }
        }
        if (remove) {
            removeFromConnection();
        }
    }

    /** The client cancelled (CANCEL frame). */
    void onClientCancel(Status s) {
        cancelInternal(null);
    }

    /** The connection closed under the call. */
    void connectionClosed() {
        cancelInternal(null);
    }

    private void onDeadline() {
        abort(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded on the server after "
                + String.format(java.util.Locale.ROOT, "%.3fs", (System.nanoTime() - startNanos) / 1e9)));
    }

    /** Ends the call from the server side: tells the client the status and the handler it is cancelled. */
    void abort(Status status) {
        cancelInternal(status);
    }

    private void cancelInternal(Status tellClient) {
        boolean changed;
        synchronized (this) {
            changed = cancelLocked(tellClient);
        }
        if (changed) {
            removeFromConnection();
        }
    }

    /** With the lock held: marks the call cancelled and tells the client; false if it had already ended. */
    private boolean cancelLocked(Status tellClient) {
        if (cancelled) {
            return false;
        }
        boolean alreadyClosed = closedLocal && outbound.isEmpty();
        if (alreadyClosed) {
            return false;
        }
        cancelled = true;
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
        }
        outbound.discard();
        if (tellClient != null && !conn.isClosed()) {
            finalStatus = tellClient.getCode().name();
            conn.trailersSending(this);
            conn.send(Frames.trailers(pool, id, tellClient, null), true);
        } else if (finalStatus == null) {
            finalStatus = Status.Code.CANCELLED.name();
        }
        outbound.wakeWaiters(this);
        schedule();
        return true;
    }

    private void removeFromConnection() {
        synchronized (this) {
            if (removed) {
                return;
            }
            removed = true;
        }
        conn.remove(this);
        conn.server.metrics().callFinished(method.getFullMethodName(), finalStatus == null ? "OK" : finalStatus,
                System.nanoTime() - startNanos);
    }

    // ------------------------------------------------------------------ delivery

    private void updateReadiness() {
        boolean ready = !cancelled && !closedLocal && outbound.isReady();
        if (ready && !wasReady) {
            readyPending = true;
            schedule();
        }
        wasReady = ready;
    }

    private void schedule() {
        if (!drainScheduled) {
            drainScheduled = true;
            try {
                executor.execute(drainTask);
            } catch (RuntimeException e) {
                drainScheduled = false;
                Connection.LOG.log(System.Logger.Level.WARNING, "server executor rejected a call task", e);
            }
        }
    }

    private void drain() {
        while (true) {
            int action;
            SlabBuffer message = null;
            boolean compressed = false;
            int credit = 0;
            synchronized (this) {
                if (startPending) {
                    startPending = false;
                    action = START;
                } else if (listener == null) {
                    drainScheduled = false;
                    return;
                } else if (cancelled && !cancelDelivered) {
                    cancelDelivered = true;
                    inbound.releaseAll();
                    action = CANCEL;
                } else if (cancelled) {
                    inbound.releaseAll();
                    drainScheduled = false;
                    return;
                } else if (closedLocal && !completeDelivered) {
                    if (!outbound.isEmpty()) {
                        drainScheduled = false;
                        return;
                    }
                    completeDelivered = true;
                    inbound.releaseAll();
                    action = COMPLETE;
                } else if (closedLocal) {
                    drainScheduled = false;
                    return;
                } else if (requested > 0 && inbound.hasMessage()) {
                    message = inbound.poll();
                    compressed = inbound.polledCompressed();
                    requested--;
                    credit = remoteHalfClosed ? 0 : inbound.takeCredit();
                    action = MESSAGE;
                } else if (remoteHalfClosed && !halfCloseDelivered && !inbound.hasMessage()) {
                    halfCloseDelivered = true;
                    action = HALF_CLOSE;
                } else if (readyPending) {
                    readyPending = false;
                    action = READY;
                } else {
                    drainScheduled = false;
                    return;
                }
            }
            if (credit > 0) {
                conn.send(Frames.window(pool, id, credit), true);
            }
            try {
                switch (action) {
                    case START -> start(definition.handler());
                    case CANCEL -> listener.onCancel();
                    case COMPLETE -> listener.onComplete();
                    case MESSAGE -> deliverMessage(message, compressed);
                    case HALF_CLOSE -> listener.onHalfClose();
                    case READY -> listener.onReady();
                    default -> {
                    }
                }
            } catch (RuntimeException | Error e) {
                handlerFailed(e);
            }
        }
    }

    /**
     * Lets the handler (or the interceptors in front of it) start the call. When it throws or returns no listener,
     * the call fails and gets a listener that ignores everything, so the drain still ends the call and frees what
     * it holds.
     */
    private void start(dev.rdmarpc.core.ServerCallHandler<ReqT, RespT> handler) {
        Listener<ReqT> l = null;
        try {
            l = handler.startCall(this, requestHeaders);
            if (l == null) {
                throw new NullPointerException("startCall of " + method.getFullMethodName() + " returned no listener");
            }
        } finally {
            synchronized (this) {
                listener = l != null ? l : new Listener<>() {
                };
            }
        }
    }

    private void deliverMessage(SlabBuffer buf, boolean compressed) {
        ReqT value;
        try {
            value = method.getRequestMarshaller().parse(buf.segment(), 0, buf.length(), compressed);
        } catch (RuntimeException e) {
            Status s = Status.fromThrowable(e);
            if (s.getCode() == Status.Code.UNKNOWN) {
                s = Status.INTERNAL.withDescription("failed to parse the request: " + e);
            }
            abort(s);
            return;
        } finally {
            buf.release();
        }
        listener.onMessage(value);
    }

    private void handlerFailed(Throwable e) {
        Connection.LOG.log(System.Logger.Level.DEBUG, "handler of " + method.getFullMethodName() + " threw", e);
        String message = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
        synchronized (this) {
            if (closedLocal || cancelled) {
                return;
            }
        }
        Status s = e instanceof dev.rdmarpc.core.StatusException se ? se.getStatus() : Status.UNKNOWN.withDescription(message);
        abort(s);
    }

    @Override
    public String toString() {
        return "ServerStream{" + method.getFullMethodName() + ", id=" + id + "}";
    }
}
