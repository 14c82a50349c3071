package dev.rdmarpc.core.internal.server;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.call.Gzip;
import dev.rdmarpc.core.internal.call.InboundMessages;
import dev.rdmarpc.core.internal.call.RecycledStreams;
import dev.rdmarpc.core.internal.call.ServerStream;
import dev.rdmarpc.core.internal.call.StreamParts;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.connection.ConnectionGuards;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.connection.KeepAlive;
import dev.rdmarpc.core.internal.connection.StreamTable;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.internal.flow.ConnectionWindow;
import dev.rdmarpc.core.protocol.DecodedHeaders;
import dev.rdmarpc.core.protocol.FlowCapability;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.FrameTooLargeException;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import dev.rdmarpc.core.protocol.MetadataTooLargeException;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** The server side of one connection: answers HELLO, opens a stream per HEADERS, routes frames. */
public final class ServerConnection extends Connection implements dev.rdmarpc.core.PeerConnection {
    public final ServerImpl server;
    private final StreamTable<ServerStream<?, ?>> streams = new StreamTable<>();
    /** Where {@link #streamsWritable} starts next (a lost update only changes which stream goes first). */
    private int writableTurn;
    /**
     * The streams that count against the concurrent-stream limit: those of {@link #streams} whose TRAILERS have not
     * been handed to the transport. A stream leaves this table just before its TRAILERS go out, so a client that
     * opens a stream as soon as it reads another's TRAILERS is never refused.
     */
    private final StreamTable<ServerStream<?, ?>> slots = new StreamTable<>();
    /**
     * Ended calls' streams kept for this connection's next calls; taken only on the connection's I/O thread (in
     * {@link #onHeaders}), so a frame the I/O thread found for a stream before it ended cannot reach its next call.
     */
    private final RecycledStreams<ServerStream<?, ?>> recycled = new RecycledStreams<>();
    /** What the client's HELLO advertised: the metadata it accepts in response HEADERS and TRAILERS. */
    private volatile LimitsCapability peerLimits = LimitsCapability.NONE;
    /** Set when the server refused this connection at accept (too many connections): it was never counted. */
    volatile boolean refusedAtAccept;
    /** Method paths and authorities of this connection's HEADERS, decoded once (frames arrive on one thread). */
    private final dev.rdmarpc.core.protocol.Utf8Cache headerStrings = new dev.rdmarpc.core.protocol.Utf8Cache(64);
    /** Reads this connection's HEADERS payloads, one at a time on its I/O thread. */
    private final dev.rdmarpc.core.protocol.WireReader reader = new dev.rdmarpc.core.protocol.WireReader();
    /** What {@link #onHeaders} decodes a client's HEADERS into (reader thread only): no object per call. */
    private final DecodedHeaders decoded = new DecodedHeaders();
    /** Guards {@link #lastStreamId} against {@link #goingAway} so the final GOAWAY names every stream accepted. */
    private final Object goAwayLock = new Object();
    private int lastStreamId;
    /** Set once the final GOAWAY is decided: new streams are refused, the connection closes when empty. */
    private volatile boolean goingAway;
    /** Set when the first GOAWAY (no new streams, please) went out. */
    private boolean goAwayStarted;
    private final ScheduledFuture<?> helloTimeout;

    /** Server keepalive, or null when it is off; started after the HELLO exchange. */
    private final KeepAlive keepAlive;
    /** Flow-control parts recycled between this connection's calls. */
    public final StreamParts parts;
    /** What the client's messages hold on this server, within the connection window and the connection's memory share. */
    final ConnectionWindow window;

    /** The limits the client advertised in its HELLO. */
    public LimitsCapability peerLimits() {
        return peerLimits;
    }

    ServerConnection(ServerImpl server, ConnectionSettings settings, FrameConnection base) {
        super(settings, base, server.guards().newControlFrameBudget(), ConnectionSendWindow.QUEUE_LIMIT);
        this.server = server;
        this.window = new ConnectionWindow(server.connectionWindow(), this::sendConnectionCredit,
                (held, more) -> server.withinShare(held + sendWindow.queued(), more));
        this.parts = new StreamParts(settings.pool(), settings.maxMessageSize(), settings.maxAttachmentBytes(),
                settings.initialWindow(), window);
        ConnectionGuards guards = server.guards();
        this.keepAlive = guards.keepAliveTimeNanos() > 0
                ? new KeepAlive(this, guards.keepAliveTimeNanos(), guards.keepAliveTimeoutNanos(), server.metrics())
                : null;
        base.setMaxInboundPayload(settings.maxFramePayload());
        long ms = server.handshakeTimeoutMillis();
        this.helloTimeout = RpcExecutors.timer().schedule(() -> {
            if (peerHello == null) {
                close("no HELLO within " + ms + " ms");
            }
        }, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void onPingReceived() {
        if (peerHello != null) {
            server.pingReceived(this);
        }
    }

    @Override
    protected void onHello(Hello hello) {
        if (peerHello != null) {
            throw new ProtocolException("second HELLO");
        }
        helloTimeout.cancel(false);
        ConnectionUpgrader[] chosen = new ConnectionUpgrader[1];
        boolean anonymous = offersUpgrade(hello) && !TlsPeers.clientVerified(base.sslSession());
        ConnectionUpgrader.Offer offer = anonymous ? null : tryServerUpgrade(hello, chosen);
        if (anonymous) {
            server.upgradeRefusedWithoutClientCertificate(this);
        }
        if (offer == null && settings.mode() == dev.rdmarpc.core.TransportMode.RDMA) {
            throw new ProtocolException(anonymous
                    ? "this server requires the RDMA transport, which under TLS it allows only to a client with a"
                            + " verified certificate, and the client presented none"
                    : "this server requires the RDMA transport, and the client cannot use it");
        }
        peerLimits = LimitsCapability.of(hello);
        takePeerFlow(hello);
        FlowCapability flow = FlowCapability.of(hello);
        if (flow != null && flow.keepsPeerWindow()) {
            window.peerKeepsWindow();
        }
        peerHello = hello;
        send(Frames.hello(settings.pool(), localHello(false, offer, chosen[0])), true);
        if (pendingUpgrade != null) {
            out = pendingUpgrade;
        }
        server.metrics().connectionOpened(out.transportName());
        server.connectionOpened(this);
        if (keepAlive != null) {
            keepAlive.start();
        }
    }

    private void sendConnectionCredit(int increment) {
        if (!isClosed()) {
            send(Frames.connectionWindow(settings.pool(), increment), true);
        }
    }

    /** A MESSAGE frame for a stream that has ended is dropped: what its message was charged goes back to the client. */
    public void messageDropped(int flags, MemorySegment memory, long offset, int length) {
        if (window.strict()) {
            window.dropped(InboundMessages.beginCharge(flags, memory, offset, length, window.window()));
        }
    }

    @Override
    protected boolean onPeerBlocked() {
        return window.peerBlocked();
    }

    @Override
    protected int advertisedConnectionWindow() {
        return window.window();
    }

    @Override
    protected void onControlFramesExceeded() {
        server.metrics().connectionClosedForControlFrames();
    }

    /**
     * TRAILERS for {@code streamId} within the client's max frame payload: a description too long is cut; metadata
     * too large for it is dropped and the client gets INTERNAL naming the sizes instead (logged).
     */
    public SlabBuffer trailers(int streamId, Status status, Metadata md) {
        int max = peerHello.maxFramePayload();
        try {
            return Frames.trailers(settings.pool(), streamId, status, md, max);
        } catch (FrameTooLargeException e) {
            String why = "trailers of " + e.payloadSize() + " bytes exceed the peer's max frame size " + max;
            LOG.log(Level.WARNING, "stream {0} to {1}: {2}; sending INTERNAL without the metadata instead of {3}",
                    streamId, peer(), why, status.getCode());
            return Frames.trailers(settings.pool(), streamId, Status.INTERNAL.withDescription(why), null, max);
        }
    }

    @Override
    public java.net.SocketAddress remoteAddress() {
        return base.remoteAddress();
    }

    @Override
    public String transportName() {
        return out.transportName();
    }

    @Override
    public java.net.SocketAddress localAddress() {
        return base.localAddress();
    }

    @Override
    public javax.net.ssl.SSLSession sslSession() {
        return base.sslSession();
    }

    @Override
    public int activeCalls() {
        return streams.size();
    }

    @Override
    public java.util.concurrent.CompletableFuture<Long> ping() {
        return super.ping();
    }

    @Override
    public void close(String reason) {
        super.close(reason);
    }

    @Override
    public String toString() {
        return "connection from " + peer() + " over " + out.transportName();
    }

    @Override
    protected void onGoAway(Frames.GoAway goAway) {
        // A client going away closes its connection itself; until it does, each GOAWAY costs the control-frame budget
        // (a client has no reason to send more than one or two, and a flood of them must end as a PING flood does).
        chargeControlFrame(FrameType.GOAWAY, "a GOAWAY");
    }

    @Override
    protected boolean onStreamFrame(int type, int flags, int streamId, int credit, MemorySegment memory, SlabBuffer holder,
                                    long offset, int length) {
        if (type == FrameType.HEADERS) {
            requireNextStreamId(streamId);
            allowLateFrames();
            onHeaders(flags, streamId, memory, offset, length);
            return false;
        }
        if (screenControlFrame(type, flags, streamId, credit, memory, offset, length)) {
            return false;
        }
        if (type != FrameType.WINDOW && type != FrameType.MESSAGE && type != FrameType.END_STREAM && type != FrameType.CANCEL) {
            throw new ProtocolException("unexpected " + FrameType.name(type) + " frame from a client");
        }
        ServerStream<?, ?> s = streams.get(streamId);
        if (s == null) {
            if ((streamId & 1) == 0 || streamId > lastStreamId) {
                throw new ProtocolException(FrameType.name(type) + " for stream " + streamId
                        + ", which the client never opened (the last stream it opened is " + lastStreamId + ")");
            }
            // every odd id up to lastStreamId was opened (HEADERS may not skip one): this stream has ended here, and
            // the client sent this before it learnt
            if (type != FrameType.MESSAGE) {
                chargeLateFrame(type, streamId);
            } else {
                messageDropped(flags, memory, offset, length);
            }
            return false;
        }
        if (type == FrameType.MESSAGE) {
            return s.onMessageFrame(streamId, flags, memory, holder, offset, length);
        }
        // a stream stays in the table for a moment after its call ended (until the thread that ended it removes it):
        // a frame that finds it ended is late exactly as one that finds no stream, and is charged the same
        boolean late = switch (type) {
            case FrameType.END_STREAM -> s.onEndStream(streamId);
            case FrameType.CANCEL -> s.onClientCancel(streamId, Frames.decodeCancel(memory.asSlice(offset, length)));
            default -> s.onWindow(streamId, credit);
        };
        if (late) {
            chargeLateFrame(type, streamId);
        }
        return false;
    }

    /**
     * A client opens streams 1, 3, 5, ... in order, skipping none, so every odd id up to the last one opened has
     * been opened, and a frame for an id this side does not know is either late (the stream ended) or for a stream
     * never opened (above the last one), with no record kept per stream.
     */
    private void requireNextStreamId(int streamId) {
        int expected = lastStreamId == 0 ? 1 : lastStreamId + 2;
        if (streamId != expected) {
            throw new ProtocolException("HEADERS opens stream " + streamId + ", but the next stream id on this connection is "
                    + expected + " (clients open odd ids in order, skipping none)");
        }
    }

    private void onHeaders(int flags, int streamId, MemorySegment memory, long offset, int length) {
        if ((streamId & 1) == 0 || streamId <= lastStreamId) {
            throw new ProtocolException("HEADERS opens stream " + streamId + ", which is not odd and above the last one (" + lastStreamId + ")");
        }
        boolean refuse;
        synchronized (goAwayLock) {
            lastStreamId = streamId;
            refuse = goingAway;
        }
        DecodedHeaders rh = decoded;
        try {
            Frames.decodeRequestHeaders(reader, rh, memory, offset, length, headerStrings, settings.maxMetadataBytes());
        } catch (MetadataTooLargeException e) {
            if (!refuse) {
                refuseStream(streamId, "metadata_size", e.toStatus());
                return;
            }
            // refused below as for any stream opened after GOAWAY
        }
        if (refuse) {
            send(trailers(streamId, Status.UNAVAILABLE.withDescription("server is shutting down"), null), true);
            return;
        }
        int open = slots.size();
        if (open >= settings.maxConcurrentStreams()) {
            refuseStream(streamId, "concurrent_streams", Status.UNAVAILABLE.withDescription(STREAM_LIMIT_REFUSAL + " ("
                    + open + " open, the server's limit is " + settings.maxConcurrentStreams() + ")"));
            return;
        }
        long held = window.held() + sendWindow.queued();
        if (!server.withinShare(held, 0)) {
            refuseStream(streamId, "memory_budget", Status.RESOURCE_EXHAUSTED.withDescription(
                    "server memory budget exhausted: " + settings.pool().inUseBytes() + " bytes of buffers in use, the"
                            + " budget is " + server.memoryBudgetBytes() + " bytes, and this connection holds " + held
                            + " bytes, more than its share; retry later"));
            return;
        }
        ServerMethodDefinition<?, ?> def = server.lookup(rh.path());
        if (def == null) {
            send(trailers(streamId, Status.UNIMPLEMENTED.withDescription("Method not found: " + rh.path()), null), true);
            return;
        }
        Status unsupported = Gzip.unsupportedEncoding(def.method().getRequestMarshaller(), rh.metadataOrNull());
        if (unsupported != null) {
            send(trailers(streamId, unsupported, Gzip.acceptedEncodings()), true);
            return;
        }
        boolean halfClosed = (flags & FrameFlags.END_STREAM) != 0;
        ServerStream<?, ?> s = recycled.take();
        if (s != null) {
            s.reuse(streamId, def, rh.metadataOrNull(), rh.authority(), rh.timeoutNanos(), halfClosed);
        } else {
            s = new ServerStream<>(this, streamId, def, rh.metadataOrNull(), rh.authority(), rh.timeoutNanos(), halfClosed);
        }
        rh.clear(); // the stream owns the metadata now
        streams.put(streamId, s);
        slots.put(streamId, s);
        s.start();
    }

    @Override
    protected void streamsWritable() {
        // the first stream told changes every time, so that streams waiting to start a message take turns instead
        // of the ones in the table's first slots winning every time the connection drains
        List<ServerStream<?, ?>> open = streams.snapshot();
        int n = open.size();
        int start = n == 0 ? 0 : Math.floorMod(writableTurn++, n);
        for (int i = 0; i < n; i++) {
            open.get((start + i) % n).onConnectionWritable();
        }
    }

    /**
     * Start of the description of the TRAILERS (UNAVAILABLE) refusing a stream over the concurrent-stream limit: the
     * application never saw the call, so a client may retry it (grpc-compat's {@code Refusals} matches it).
     */
    static final String STREAM_LIMIT_REFUSAL = "server refused the stream: too many concurrent streams on this connection";

    /** Answers a HEADERS with TRAILERS carrying {@code status}, before any handler saw it; the connection carries on. */
    private void refuseStream(int streamId, String limit, Status status) {
        server.metrics().limitRefused(limit);
        Connection.LOG.log(System.Logger.Level.DEBUG, "refused stream {0} from {1}: {2}", streamId, peer(), status.getDescription());
        send(trailers(streamId, status, null), true);
    }

    /**
     * Why {@code md} cannot be sent as {@code what} to this client (its metadata is over the limit the client
     * advertised), or null when it can.
     */
    public String metadataOverPeerLimit(dev.rdmarpc.core.Metadata md, String what) {
        long size = Frames.metadataBytes(md);
        int max = peerLimits.maxMetadataBytes();
        if (size <= max) {
            return null;
        }
        return what + " of " + size + " bytes (keys and values plus " + Frames.METADATA_ENTRY_OVERHEAD
                + " per entry) exceed the " + max + " bytes the client accepts; not sent";
    }

    /** The streams kept for this connection's later calls: an ended stream, every field cleared, gives itself back here. */
    public RecycledStreams<ServerStream<?, ?>> recycled() {
        return recycled;
    }

    /** The stream's TRAILERS are about to go out: it no longer counts against the concurrent-stream limit. */
    public void trailersSending(ServerStream<?, ?> s) {
        slots.remove(s.id(), s);
    }

    public void remove(ServerStream<?, ?> s) {
        slots.remove(s.id(), s);
        streams.remove(s.id(), s);
        if (goingAway && streams.isEmpty()) {
            close("server shut down");
        }
    }

    /**
     * Graceful end in two steps, as HTTP/2 servers do: a first GOAWAY asks the client to open no more streams here,
     * followed by a PING; the client's ACK comes after every HEADERS it sent before it saw the GOAWAY, so those are
     * still served. Then (or after {@link #GOAWAY_ACK_WAIT_MILLIS} without an ACK) the final GOAWAY names the last
     * stream served, later HEADERS are refused, and the connection closes once its streams end.
     */
    @Override
    public void goAway() {
        synchronized (goAwayLock) {
            if (goAwayStarted) {
                return;
            }
            goAwayStarted = true;
        }
        if (isClosed() || peerHello == null) {
            finishGoAway();
            return;
        }
        send(Frames.goAway(settings.pool(), Integer.MAX_VALUE, SHUTTING_DOWN), true);
        ScheduledFuture<?> noAck = RpcExecutors.timer().schedule(this::finishGoAway, GOAWAY_ACK_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        ping().whenComplete((rtt, error) -> {
            noAck.cancel(false);
            finishGoAway();
        });
    }

    /** Longest wait for the client's PING ACK after the first GOAWAY. */
    static final long GOAWAY_ACK_WAIT_MILLIS = 5_000;
    private static final Status SHUTTING_DOWN = Status.UNAVAILABLE.withDescription("server is shutting down");

    private void finishGoAway() {
        int last;
        synchronized (goAwayLock) {
            if (goingAway) {
                return;
            }
            goAwayStarted = true;
            goingAway = true;
            last = lastStreamId;
        }
        if (!isClosed() && peerHello != null) {
            send(Frames.goAway(settings.pool(), last, SHUTTING_DOWN), true);
        }
        if (streams.isEmpty()) {
            close("server shut down");
        }
    }

    /** Forced shutdown: cancel every stream, then close. */
    void shutdownNow() {
        goingAway = true;
        for (ServerStream<?, ?> s : streams.snapshot()) {
            s.abort(Status.UNAVAILABLE.withDescription("server is shutting down now"));
        }
        close("server shut down now");
    }

    int activeStreams() {
        return streams.size();
    }

    @Override
    protected void connectionClosed(String reason, Throwable cause) {
        helloTimeout.cancel(false);
        if (keepAlive != null) {
            keepAlive.stop();
        }
        if (peerHello != null) {
            server.metrics().connectionClosed(out.transportName());
        }
        slots.takeAll();
        for (ServerStream<?, ?> s : streams.takeAll()) {
            s.connectionClosed();
        }
        server.connectionClosed(this, peerHello != null, reason);
    }
}
