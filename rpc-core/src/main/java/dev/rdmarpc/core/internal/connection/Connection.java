package dev.rdmarpc.core.internal.connection;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.exec.CallbackLane;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Core's handler of one transport connection, client or server: the HELLO exchange and optional
 * upgrade, connection-level frames (PING, GOAWAY), and dispatch of stream frames to subclasses.
 */
public abstract class Connection implements FrameHandler {
    public static final System.Logger LOG = System.getLogger("dev.rdmarpc.core.Connection");

    public final ConnectionSettings settings;
    protected final FrameConnection base;
    /** The peer's connection window and what this connection's streams have queued to send. */
    public final ConnectionSendWindow sendWindow;
    public volatile FrameConnection out;
    public volatile Hello peerHello;
    private volatile boolean closed;
    private ConnectionUpgrader.Offer offer;
    private ConnectionUpgrader upgrader;
    /** Set when this client closed the connection because its side of the upgrade failed after the server moved. */
    private volatile boolean upgradeFailedAfterServerMoved;
    /** PINGs sent and not yet acknowledged, by their data; guarded by itself. */
    private final Map<Long, PendingPing> pings = new java.util.HashMap<>();
    private long nextPingData = System.nanoTime();
    /** Set (under {@link #pings}) when the connection closes: later pings fail with it. */
    private Status pingFailure;

    /** The default executor's lane whose wake-ups wait for the end of the read in progress, or null (I/O thread only). */
    private CallbackLane heldLane;

    /** Counts the peer's frames that move no call forward; past its budget the connection is closed. */
    private final ControlFrameBudget controlFrames;
    /** Frames received so far (wrapping); written by the reading thread, read by timers (keepalive). */
    @SuppressWarnings("unused") // through FRAMES_RECEIVED
    private int framesReceived;
    private static final VarHandle FRAMES_RECEIVED;

    static {
        try {
            FRAMES_RECEIVED = MethodHandles.lookup().findVarHandle(Connection.class, "framesReceived", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@code queueLimit}: bytes queued across the connection's streams past which sending threads wait. */
    protected Connection(ConnectionSettings settings, FrameConnection base, ControlFrameBudget controlFrames, long queueLimit) {
        this.sendWindow = new ConnectionSendWindow(queueLimit);
        this.sendWindow.onBlocked(this::sendBlocked);
        this.settings = settings;
        this.base = base;
        this.out = base;
        this.controlFrames = controlFrames;
    }

    /**
     * A read burst starts: runs handed to the shared default executor during it (this connection's call callbacks
     * when it is their executor, or what a layer above hands it from a direct executor: grpc-compat's grpc calls) go
     * to a worker together at its end (one wake-up per burst, {@link CallbackLane#holdWakes}).
     */
    @Override
    public final void onReadBurstStart() {
        if (heldLane == null) {
            heldLane = RpcExecutors.sharedCallbacks().holdWakes();
        }
    }

    @Override
    public final void onReadBurstEnd() {
        CallbackLane lane = heldLane;
        if (lane != null) {
            heldLane = null;
            lane.releaseWakes();
        }
    }

    /** Frames received so far (a count that wraps: only whether it moved means anything). */
    final int framesReceived() {
        return (int) FRAMES_RECEIVED.getOpaque(this);
    }

    /**
     * Screens a stream frame before it is routed: a connection WINDOW (stream 0, 4-byte payload) refills the peer's
     * connection window and lets waiting streams send; an empty WINDOW on stream 0 (the RDMA transport's credit frame,
     * which that transport consumes) and an empty MESSAGE continuation count against the control-frame limit, and a
     * stream WINDOW granting nothing is a protocol error. Returns true when the frame needs nothing more.
     */
    protected final boolean screenControlFrame(int type, int flags, int streamId, int credit, MemorySegment memory, long offset,
                                               int length) {
        if (type == FrameType.WINDOW) {
            if (streamId == 0) {
                if (length == 0) {
                    // the RDMA transport's credit frame, which that transport consumes: over TCP it does nothing
                    chargeControlFrame(type, "an empty WINDOW on stream 0");
                    return true;
                }
                int increment = Frames.decodeConnectionWindow(memory.asSlice(offset, length));
                if (increment == 0) {
                    if (!onPeerBlocked()) {
                        chargeControlFrame(type, "a BLOCKED (connection WINDOW of 0) beyond one per connection WINDOW sent");
                    }
                    return true;
                }
                sendWindow.grant(increment);
                streamsWritable();
                return true;
            }
            if (credit <= 0) {
                throw new ProtocolException("WINDOW on stream " + streamId + " grants " + credit + " bytes (must be positive)");
            }
        } else if (type == FrameType.MESSAGE && length == 0 && (flags & FrameFlags.BEGIN) == 0) {
            chargeControlFrame(type, "an empty MESSAGE continuation on stream " + streamId);
        }
        return false;
    }

    /**
     * Charges one frame that moves no call forward (a PING to answer, a frame for a stream that has ended, an empty
     * frame) to the connection's budget.
     *
     * @throws ProtocolException "too many control frames: ..." when the budget is spent, which closes the connection
     */
    protected final void chargeControlFrame(int type, String what) {
        if (!controlFrames.tryTake(System.nanoTime())) {
            onControlFramesExceeded();
            throw new ProtocolException("too many control frames: the peer sent more than " + controlFrames.describe()
                    + " (PINGs, empty frames, frames for ended streams); the last was " + what + " ("
                    + FrameType.name(type) + ")");
        }
    }

    /** The peer has spent its control-frame budget; the connection is about to close. */
    protected void onControlFramesExceeded() {
    }

    /** Late frames a well-behaved peer may send per stream after it ended here (its own end crossing this side's). */
    private static final int LATE_FRAMES_PER_STREAM = 2;
    /** Most late frames allowed ahead, however many streams ended. */
    private static final int LATE_FRAME_ALLOWANCE_CAP = 1 << 20;
    /** Late frames still free of charge: raised per stream, lowered by the reading thread as they arrive. */
    private final java.util.concurrent.atomic.AtomicInteger lateFrameAllowance = new java.util.concurrent.atomic.AtomicInteger();

    /** A stream opened or ended: once it has ended here, the peer may still send a frame or two for it. */
    protected final void allowLateFrames() {
        if (lateFrameAllowance.get() < LATE_FRAME_ALLOWANCE_CAP) {
            lateFrameAllowance.addAndGet(LATE_FRAMES_PER_STREAM);
        }
    }

    /**
     * A frame other than MESSAGE for a stream that has ended here: free while the streams' allowance lasts
     * (a CANCEL crossing this side's TRAILERS when a deadline fires on both sides, say), then charged as a control
     * frame. Late MESSAGE frames are not charged: up to a window of them may legitimately be in flight.
     */
    protected final void chargeLateFrame(int type, int streamId) {
        if (lateFrameAllowance.get() > 0) {
            lateFrameAllowance.decrementAndGet(); // the only decrement, on the reading thread: never below 0
            return;
        }
        chargeControlFrame(type, "a frame for stream " + streamId + ", which has ended");
    }

    /** Peer's address, for statuses and logs. */
    public String peer() {
        return String.valueOf(base.remoteAddress());
    }

    public boolean isClosed() {
        return closed;
    }

    /** Sends a frame on the current path (upgraded or base). */
    public void send(SlabBuffer frame, boolean flush) {
        out.send(frame, null, flush);
    }

    /** Tells the peer that a message waits for more of its connection window than is left (a BLOCKED). */
    private void sendBlocked() {
        if (!isClosed()) {
            send(Frames.connectionBlocked(settings.pool()), true);
        }
    }

    /**
     * The peer says a message of its waits for more of this side's connection window than it has left (a BLOCKED).
     * Returns false for a BLOCKED beyond one per connection WINDOW sent (the frame is then charged as a control frame). Only a side that keeps
     * a connection window for its peer expects one: elsewhere it is a protocol error.
     */
    protected boolean onPeerBlocked() {
        throw new ProtocolException("BLOCKED (a connection WINDOW of 0) from the peer, but this side advertised no"
                + " connection window");
    }

    /** This side's HELLO; a client also prepares its upgrade offer here. */
    protected Hello localHello(boolean clientSide, ConnectionUpgrader.Offer serverOffer, ConnectionUpgrader serverUpgrader) {
        Map<Integer, byte[]> caps = new LinkedHashMap<>();
        if (clientSide && settings.mode() != TransportMode.TCP) {
            for (ConnectionUpgrader u : settings.upgraders()) {
                ConnectionUpgrader.Offer o = u.prepare(base, settings.pool(), true);
                if (o != null) {
                    offer = o;
                    upgrader = u;
                    caps.put(u.capabilityId(), o.capability());
                    break;
                }
            }
        } else if (serverOffer != null) {
            caps.put(serverUpgrader.capabilityId(), serverOffer.capability());
        }
        caps.put(Hello.CAP_LIMITS, new LimitsCapability(clientSide ? 0 : settings.maxConcurrentStreams(),
                settings.maxMetadataBytes(), settings.maxAttachmentBytes()).encode());
        caps.put(Hello.CAP_FLOW, new FlowCapability(true, advertisedConnectionWindow()).encode());
        return new Hello(Hello.VERSION, settings.initialWindow(), settings.maxFramePayload(), settings.maxMessageSize(), caps);
    }

    /** The connection window this side advertises in its HELLO; 0 (none) unless a subclass keeps one. */
    protected int advertisedConnectionWindow() {
        return 0;
    }

    /** The peer's HELLO: when it keeps connection-level flow control, this side's sends honour its window. */
    protected final void takePeerFlow(Hello hello) {
        FlowCapability flow = FlowCapability.of(hello);
        if (flow != null) {
            sendWindow.peerWindow(flow.connectionWindow());
        }
    }

    /**
     * Client side: after the server's HELLO, complete or drop the upgrade. Returns false when the connection is being
     * closed instead: the server's HELLO offered the upgrade, so the server already sends on the upgraded path, and
     * this side's transition failed; staying on the base path would leave the two sides on different paths.
     */
    protected boolean completeClientUpgrade(Hello serverHello) {
        if (offer == null) {
            requireUpgradeUnlessOptional("this side has no usable RDMA device");
            return true;
        }
        byte[] peerCap = serverHello.capabilities().get(upgrader.capabilityId());
        if (peerCap == null) {
            offer.abandon();
            offer = null;
            requireUpgradeUnlessOptional("the server offered no " + upgrader.name());
            return true;
        }
        try {
            FrameConnection upgraded = offer.complete(peerCap, this);
            upgraded.setMaxInboundPayload(settings.maxFramePayload());
            out = upgraded;
            return true;
        } catch (Exception e) {
            offer.abandon();
            offer = null;
            if (e instanceof ProtocolException) {
                throw (ProtocolException) e; // the server's offer was impossible: this connection closes
            }
            requireUpgradeUnlessOptional(upgrader.name() + " upgrade failed: " + e.getMessage());
            LOG.log(Level.INFO, "closing connection to {0}: the {1} upgrade failed on this side after the server had moved"
                    + " to it ({2}); the next connection stays on {3}", peer(), upgrader.name(), e.toString(), base.transportName());
            upgradeFailedAfterServerMoved = true;
            close(upgrader.name() + " upgrade failed on the client after the server had moved to it: " + e.getMessage());
            return false;
        }
    }

    /** Whether this client closed the connection because its side of the upgrade failed (see {@link #completeClientUpgrade}). */
    public boolean upgradeFailedAfterServerMoved() {
        return upgradeFailedAfterServerMoved;
    }

    /** Server side: whether the client's HELLO offers an upgrade this side would consult. */
    protected final boolean offersUpgrade(Hello clientHello) {
        for (ConnectionUpgrader u : settings.upgraders()) {
            if (clientHello.capabilities().containsKey(u.capabilityId())) {
                return true;
            }
        }
        return false;
    }

    /** Server side: try the upgrade the client offered; returns the server's offer to advertise, or null. */
    protected ConnectionUpgrader.Offer tryServerUpgrade(Hello clientHello, ConnectionUpgrader[] chosen) {
        if (settings.mode() == TransportMode.TCP) {
            return null;
        }
        for (ConnectionUpgrader u : settings.upgraders()) {
            byte[] peerCap = clientHello.capabilities().get(u.capabilityId());
            if (peerCap == null) {
                continue;
            }
            ConnectionUpgrader.Offer o = u.prepare(base, settings.pool(), false);
            if (o == null) {
                return null;
            }
            try {
                FrameConnection upgraded = o.complete(peerCap, this);
                upgraded.setMaxInboundPayload(settings.maxFramePayload());
                chosen[0] = u;
                pendingUpgrade = upgraded;
                return o;
            } catch (Exception e) {
                o.abandon();
                if (e instanceof ProtocolException) {
                    throw (ProtocolException) e; // the client's offer was impossible: this connection closes
                }
                LOG.log(Level.INFO, "staying on {0} with {1}: {2} upgrade failed: {3}", base.transportName(), peer(), u.name(), e.toString());
                return null;
            }
        }
        return null;
    }

    /** Server side: the upgraded path to switch to once our HELLO is out. */
    protected FrameConnection pendingUpgrade;

    private void requireUpgradeUnlessOptional(String why) {
        if (settings.mode() == TransportMode.RDMA) {
            throw new ProtocolException("RDMA transport was required but is not possible: " + why);
        }
    }

    @Override
    public final void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
        onFrame(type, flags, streamId, credit, payload, 0, (int) payload.byteSize());
    }

    @Override
    public final void onFrame(int type, int flags, int streamId, int credit, MemorySegment memory, long offset, int length) {
        dispatch(type, flags, streamId, credit, memory, null, offset, length);
    }

    /** A MESSAGE frame that carries a whole message may be kept in {@code holder} (see {@code InboundMessages}). */
    @Override
    public final boolean onFrame(int type, int flags, int streamId, int credit, SlabBuffer holder, long offset, int length) {
        return dispatch(type, flags, streamId, credit, holder.segment(), type == FrameType.MESSAGE ? holder : null,
                offset, length);
    }

    /** Handles one frame; returns whether a reference to {@code holder} (null: none offered) was kept. */
    private boolean dispatch(int type, int flags, int streamId, int credit, MemorySegment memory, SlabBuffer holder,
                             long offset, int length) {
        FRAMES_RECEIVED.setOpaque(this, (int) FRAMES_RECEIVED.getOpaque(this) + 1);
        switch (type) {
            case FrameType.HELLO -> onHello(Frames.decodeHello(memory.asSlice(offset, length)));
            case FrameType.PING -> {
                long data = Frames.decodePing(memory.asSlice(offset, length));
                if ((flags & FrameFlags.ACK) == 0) {
                    chargeControlFrame(type, "a PING");
                    send(Frames.ping(settings.pool(), data, true), true);
                    onPingReceived();
                } else {
                    onPingAck(data);
                }
            }
            case FrameType.GOAWAY -> onGoAway(Frames.decodeGoAway(memory.asSlice(offset, length)));
            case FrameType.RTS, FrameType.FIN ->
                    throw new ProtocolException(FrameType.name(type) + " frame on a " + base.transportName() + " connection");
            default -> {
                if (peerHello == null) {
                    throw new ProtocolException(FrameType.name(type) + " before HELLO");
                }
                return onStreamFrame(type, flags, streamId, credit, memory, holder, offset, length);
            }
        }
        return false;
    }

    protected abstract void onHello(Hello hello);

    protected abstract void onGoAway(Frames.GoAway goAway);

    /** A PING in flight: when it left, and who waits for its ACK. */
    private record PendingPing(long sentNanos, java.util.concurrent.CompletableFuture<Long> rtt) {
    }

    /**
     * Sends a PING; the result completes with the round-trip time in nanoseconds when the peer's ACK arrives, or
     * fails with UNAVAILABLE if the connection closes first.
     */
    public java.util.concurrent.CompletableFuture<Long> ping() {
        java.util.concurrent.CompletableFuture<Long> rtt = new java.util.concurrent.CompletableFuture<>();
        long data;
        synchronized (pings) {
            if (pingFailure != null) {
                rtt.completeExceptionally(pingFailure.asException());
                return rtt;
            }
            data = nextPingData++;
            pings.put(data, new PendingPing(System.nanoTime(), rtt));
        }
        send(Frames.ping(settings.pool(), data, false), true);
        return rtt;
    }

    /** The peer sent a PING (answered already). */
    protected void onPingReceived() {
    }

    /** The peer acknowledged a PING this side sent. */
    private void onPingAck(long data) {
        PendingPing p;
        synchronized (pings) {
            p = pings.remove(data);
        }
        if (p == null) {
            throw new ProtocolException("PING ACK for a PING this side never sent");
        }
        p.rtt().complete(System.nanoTime() - p.sentNanos());
    }

    /** Fails every unanswered PING, and every later one, with {@code s}. */
    protected void failPings(Status s) {
        java.util.List<PendingPing> unanswered;
        synchronized (pings) {
            if (pingFailure == null) {
                pingFailure = s;
            }
            unanswered = new java.util.ArrayList<>(pings.values());
            pings.clear();
        }
        for (PendingPing p : unanswered) {
            p.rtt().completeExceptionally(s.asException());
        }
    }

    /**
     * A stream's frame (or connection WINDOW): its payload is {@code length} bytes of {@code memory} at {@code offset},
     * which lie in {@code holder} when it is not null (offered for MESSAGE frames only). Returns whether a reference
     * to the holder was kept.
     */
    protected abstract boolean onStreamFrame(int type, int flags, int streamId, int credit, MemorySegment memory,
                                             SlabBuffer holder, long offset, int length);

    /** The transport drained below its low-water mark: streams that held back for it send again. */
    @Override
    public void onWritable() {
        sendWindow.drained();
        streamsWritable();
    }

    /** Tells every open stream that the connection can take more. */
    protected abstract void streamsWritable();

    @Override
    public final void onClosed(String reason, Throwable cause) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (cause instanceof ProtocolException) {
            LOG.log(Level.WARNING, "closed connection with {0}: protocol error: {1}", peer(), reason);
        } else {
            LOG.log(Level.DEBUG, "connection with {0} closed: {1}", peer(), reason);
        }
        if (offer != null) {
            offer.abandon();
        }
        FrameConnection o = out;
        if (o != base) {
            o.close(reason);
        }
        base.close(reason);
        connectionClosed(reason, cause);
        failPings(unavailable("connection with", peer(), reason));
    }

    /** Every stream on the connection fails or is cancelled. */
    protected abstract void connectionClosed(String reason, Throwable cause);

    /** Closes the connection (both paths) with a reason. */
    public void close(String reason) {
        FrameConnection o = out;
        if (o != base) {
            o.close(reason);
        }
        base.close(reason);
    }

    protected static Status unavailable(String what, String peer, String reason) {
        return Status.UNAVAILABLE.withDescription(what + " " + peer + ": " + reason);
    }
}
