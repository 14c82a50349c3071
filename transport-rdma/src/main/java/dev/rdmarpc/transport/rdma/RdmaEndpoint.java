package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One upgraded connection: an RC queue pair on the device's shared CQ and SRQ, seen by core as a
 * {@link FrameConnection}. Sends go through {@link SendPath} on the caller's thread; receives and completions arrive
 * on the device's poller thread ({@link #inIoThread()}), which runs {@link ReceivePath} and calls core's handler.
 * Closing moves the QP to ERR, waits for the flush of everything posted (a drain marker), then destroys the QP and
 * frees every slab it held. The base (TCP) connection's addresses are this one's, and so is its TLS session: the
 * session that authenticated the peer and carried the HELLO this queue pair was made from.
 */
final class RdmaEndpoint implements FrameConnection, SendEvents {
    /** MESSAGE payload per frame asked of core: the largest frame core makes by default. */
    static final int PREFERRED_CHUNK_SIZE = FrameHeader.DEFAULT_MAX_PAYLOAD;
    /** How long teardown waits for the flush of posted work requests before destroying the QP anyway. */
    static final long DRAIN_TIMEOUT_NANOS = 30_000_000_000L;

    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RdmaEndpoint.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int id;
    final RdmaDeviceContext context;
    final QueuePair qp;
    private final FrameConnection base;
    private final FrameHandler handler;
    private final Arena arena = Arena.ofShared();
    final SendPath send;
    final ReceivePath receive;
    private volatile int state = OPEN;
    private volatile int maxInboundPayload = FrameHeader.DEFAULT_MAX_PAYLOAD;
    private volatile String closeReason;
    private volatile Throwable closeCause;
    /** Whether a protocol error of the peer's was counted and logged: once per connection. */
    private final AtomicBoolean protocolErrorReported = new AtomicBoolean();
    /** Poller: completions of this endpoint arrived in the current batch. */
    boolean touched;
    /** Poller: when to give up waiting for the drain marker. */
    long drainDeadlineNanos;
    /** Poller: core heard a read burst start on this endpoint and not yet its end ({@link CompletionPoller}). */
    boolean inReadBurst;
    /** Set once the queue pair reached RTS: until then a failed setup may destroy it on the setup thread. */
    volatile boolean connected;

    RdmaEndpoint(int id, RdmaDeviceContext context, QueuePair qp, FrameConnection base, FrameHandler handler,
                 SlabPool pool, RdmaCapability peer) {
        this.id = id;
        this.context = context;
        this.qp = qp;
        this.base = base;
        this.handler = handler;
        RendezvousGrants grants = new RendezvousGrants(qp.protectionDomain(), context.useWindows(),
                context.attachmentsOnDemand(), context.attachmentRegistrations());
        this.send = new SendPath(this, qp, pool, grants, arena, id, context.config().sendQueueDepth(),
                peer.receiveBufferSize(), peer.credits(), context.readChunk(),
                context.useWindows() && context.localOpsNeedEmptySendQueue(), context.registry().device());
        this.receive = new ReceivePath(this, send, handler, pool);
    }

    /**
     * Poller, before a frame goes to core: the first frame of this endpoint in a poll cycle opens a read burst, which
     * the poller ends once the cycle's completions are all handled ({@link FrameHandler#onReadBurstStart}).
     */
    void beforeFrame() {
        if (inReadBurst) {
            return;
        }
        inReadBurst = true;
        context.poller().readBurstStarted(this);
        handler.onReadBurstStart();
    }

    /** Poller: ends the read burst {@link #beforeFrame} opened. */
    void endReadBurst() {
        inReadBurst = false;
        handler.onReadBurstEnd();
    }

    // ---------------------------------------------------------------- FrameConnection

    @Override
    public void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
        if (head == null) {
            if (tail != null) {
                tail.release();
            }
            throw new NullPointerException("head");
        }
        send.send(head, tail, flush);
    }

    @Override
    public boolean sendsForeignMemory() {
        return true;
    }

    /** An attachment's chunk: a rendezvous straight from the application's memory when it is larger than a SEND. */
    @Override
    public void send(SlabBuffer head, java.lang.foreign.MemorySegment body, Runnable done, boolean flush) {
        send.sendForeign(head, body, done, flush);
    }

    @Override
    public void flush() {
        send.flush();
    }

    @Override
    public boolean isWritable() {
        return send.isWritable();
    }

    @Override
    public void setMaxInboundPayload(int maxPayload) {
        if (maxPayload < 0) {
            throw new IllegalArgumentException("negative maximum payload " + maxPayload);
        }
        this.maxInboundPayload = Math.min(maxPayload, FrameHeader.MAX_PAYLOAD_LIMIT);
    }

    /** The TCP connection this one was upgraded from, kept open as liveness (tests close it). */
    FrameConnection base() {
        return base;
    }

    int maxInboundPayload() {
        return maxInboundPayload;
    }

    @Override
    public int preferredChunkSize() {
        return PREFERRED_CHUNK_SIZE;
    }

    @Override
    public void close(String reason) {
        closeWith(reason == null ? "closed" : reason, null);
    }

    @Override
    public boolean isOpen() {
        return state == OPEN;
    }

    @Override
    public boolean inIoThread() {
        return context.poller().isPollerThread();
    }

    /** The send side drained below its low mark after saying it was not writable: tells core, on the poller. */
    @Override
    public void writable() {
        if (inIoThread()) {
            fireWritable();
        } else {
            context.poller().execute(this::fireWritable);
        }
    }

    /** Found during one of core's sends or flushes: core hears it from a poller task once that call returned. */
    @Override
    public void writableAfterCall() {
        context.poller().execute(this::fireWritable);
    }

    private void fireWritable() {
        if (!isOpen()) {
            return;
        }
        try {
            handler.onWritable();
        } catch (RuntimeException e) {
            Fallbacks.LOG.log(Level.WARNING, "frame handler of " + base.remoteAddress() + " failed in onWritable", e);
        }
    }

    @Override
    public SocketAddress remoteAddress() {
        return base.remoteAddress();
    }

    @Override
    public SocketAddress localAddress() {
        return base.localAddress();
    }

    /**
     * The TLS session of the connection this one upgraded, or null when that was plaintext: it authenticated the peer
     * and protected the RDMA parameters, though the bytes on the queue pair are not encrypted (PROTOCOL.md, "TLS and
     * RDMA").
     */
    @Override
    public javax.net.ssl.SSLSession sslSession() {
        return base.sslSession();
    }

    @Override
    public String transportName() {
        return "rdma";
    }

    @Override
    public String toString() {
        return "RdmaEndpoint[qpn " + qp.qpNum() + ", peer " + base.remoteAddress() + "]";
    }

    // ---------------------------------------------------------------- closing

    /** Closes because of a failure: a protocol error, a completion error, a verbs call that failed. */
    @Override
    public void closeOnError(Throwable error) {
        String reason = error.getMessage() == null ? error.toString() : error.getMessage();
        if (error instanceof ProtocolException) {
            // reported even once closing: an RDMA READ that the peer's bad RTS made fail can complete after the peer,
            // whose own queue pair that error moved to ERR as well, has already hung up
            if (protocolErrorReported.compareAndSet(false, true)) {
                RdmaMetrics.PROTOCOL_ERRORS.increment();
                Fallbacks.LOG.log(Level.WARNING, "{0} RDMA connection with {1} (qp {2}): protocol error: {3}",
                        isOpen() ? "closing" : "already closing", base.remoteAddress(), qp.qpNum(), reason);
            }
        } else if (isOpen()) {
            if (error instanceof IllegalStateException || error instanceof dev.rdmarpc.transport.rdma.verbs.VerbsException) {
                Fallbacks.LOG.log(Level.WARNING, "closing RDMA connection with {0}: {1}", base.remoteAddress(), reason);
            } else {
                Fallbacks.LOG.log(Level.WARNING, "closing RDMA connection with " + base.remoteAddress() + ": "
                        + reason, error); // not an expected failure: where it came from matters
            }
        }
        closeWith(reason, error);
    }

    private void closeWith(String reason, Throwable cause) {
        if (STATE.compareAndSet(this, OPEN, CLOSING)) {
            closeReason = reason;
            closeCause = cause;
            context.poller().execute(this::beginTeardown);
        }
    }

    /** Poller: tells core, moves the QP to ERR and waits for the flush (or finishes at once). */
    void beginTeardown() {
        try {
            handler.onClosed(closeReason, closeCause);
        } catch (RuntimeException e) {
            Fallbacks.LOG.log(Level.WARNING, "connection close handler failed", e);
        }
        if (send.beginClose()) {
            drainDeadlineNanos = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
            context.poller().awaitDrain(this);
        } else {
            finishTeardown();
        }
    }

    /** Poller: destroys the QP and frees everything the connection held. */
    void finishTeardown() {
        if (!STATE.compareAndSet(this, CLOSING, CLOSED)) {
            return;
        }
        context.unregister(this);
        try {
            send.finishClose();
            receive.releaseAll();
            arena.close();
            context.connectionClosed();
        } finally {
            context.unreserve(qp); // last: the context may close once nothing of this queue pair is left
        }
    }

    /** The queue pair never connected: frees what the constructor allocated (the caller destroys the QP). */
    void discardUnconnected() {
        state = CLOSED;
        arena.close();
    }

    boolean isClosed() {
        return state == CLOSED;
    }
}
