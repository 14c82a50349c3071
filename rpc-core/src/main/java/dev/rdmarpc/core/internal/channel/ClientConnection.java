package dev.rdmarpc.core.internal.channel;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.internal.call.ClientStream;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.connection.ConnectionGuards;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.connection.KeepAlive;
import dev.rdmarpc.core.internal.connection.StreamTable;
import dev.rdmarpc.core.protocol.DecodedHeaders;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameTooLargeException;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import dev.rdmarpc.core.protocol.MetadataTooLargeException;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.ProtocolSwitchException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The client side of one connection: opens streams, routes their frames, fails them when it closes. */
public final class ClientConnection extends Connection {
    private final String authority;
    private final StreamTable<ClientStream<?, ?>> streams = new StreamTable<>();
    /** Where {@link #streamsWritable} starts next (a lost update only changes which stream goes first). */
    private int writableTurn;
    /** Reads this connection's HEADERS and TRAILERS payloads, one at a time on its I/O thread. */
    private final dev.rdmarpc.core.protocol.WireReader reader = new dev.rdmarpc.core.protocol.WireReader();
    /** What response HEADERS and TRAILERS are decoded into (reader thread only): no object per frame. */
    private final DecodedHeaders decoded = new DecodedHeaders();
    private final CompletableFuture<ClientConnection> ready = new CompletableFuture<>();
    private int nextStreamId = 1;
    private volatile boolean draining;
    private volatile Status closeStatus;
    private volatile boolean switchesProtocol;
    /** What the server's HELLO advertised; no limit until it arrives. */
    private volatile LimitsCapability peerLimits = LimitsCapability.NONE;
    /** Streams waiting for one of the server's concurrent-stream slots, in the order they asked; guarded by this. */
    private final ArrayDeque<ClientStream<?, ?>> waiting = new ArrayDeque<>();
    /** Slots handed to a waiting stream that has not opened yet (it counts as open); guarded by this. */
    private int reservedSlots;

    /** {@link #open} sent the stream's HEADERS. */
    public static final int OPENED = 0;
    /** {@link #open} queued the stream until the server's concurrent-stream limit leaves it a slot. */
    public static final int QUEUED = 1;
    /** {@link #open} found the connection closed or going away: the stream must use another one. */
    static final int REFUSED = 2;

    private final ChannelImpl channel;
    /** Client keepalive watching this connection, when the channel has it on; set once HELLO is done. */
    volatile KeepAlive keepAlive;

    ClientConnection(ConnectionSettings settings, FrameConnection base, String authority, ChannelImpl channel) {
        // a client's queued requests are its own memory: each stream's limit is enough, and no call waits on another's
        super(settings, base, ConnectionGuards.DEFAULT.newControlFrameBudget(), Long.MAX_VALUE);
        this.authority = authority;
        this.channel = channel;
    }

    @Override
    protected void streamsWritable() {
        // the first stream told changes every time, so that streams waiting to start a message take turns instead
        // of the ones in the table's first slots winning every time the connection drains
        List<ClientStream<?, ?>> open = streams.snapshot();
        int n = open.size();
        int start = n == 0 ? 0 : Math.floorMod(writableTurn++, n);
        for (int i = 0; i < n; i++) {
            open.get((start + i) % n).onConnectionWritable(this);
        }
    }

    /** Sends this side's HELLO; {@link #ready()} completes when the server's HELLO arrives. */
    void start() {
        Hello hello = localHello(true, null, null);
        send(Frames.hello(settings.pool(), hello), true);
    }

    CompletableFuture<ClientConnection> ready() {
        return ready;
    }

    String authority() {
        return authority;
    }

    /** Whether new calls may use this connection. */
    boolean acceptsNewStreams() {
        return !draining && !isClosed() && !ready.isCompletedExceptionally();
    }

    @Override
    protected void onHello(Hello hello) {
        if (peerHello != null) {
            throw new ProtocolException("second HELLO");
        }
        base.setMaxInboundPayload(settings.maxFramePayload());
        peerLimits = LimitsCapability.of(hello);
        takePeerFlow(hello);
        peerHello = hello;
        if (completeClientUpgrade(hello)) {
            ready.complete(this);
        }
    }

    /**
     * Registers the stream under a new id and sends its HEADERS, atomically so that ids reach the server in
     * increasing order; or, when the server's advertised concurrent-stream limit is reached (or streams already wait),
     * queues it: {@link ClientStream#slotReady} is called when a slot is reserved for it. {@code reserved} says the
     * caller holds such a slot. Returns {@link #OPENED}, {@link #QUEUED} or {@link #REFUSED} (closed or going away).
     * Called under the stream's lock, so it wakes no other stream: when the HEADERS are too large for the server it
     * throws {@link FrameTooLargeException} with a reserved slot still held, which the stream gives back
     * ({@link #releaseSlot}) once its lock is released.
     */
    public int open(ClientStream<?, ?> stream, boolean flush, boolean reserved) {
        synchronized (this) {
            if (reserved) {
                reservedSlots--;
            }
            if (!acceptsNewStreams()) {
                return REFUSED;
            }
            if (!reserved && (!waiting.isEmpty() || streams.size() + reservedSlots >= peerLimits.maxConcurrentStreams())) {
                waiting.add(stream);
                return QUEUED;
            }
            int id = nextStreamId;
            // encoded first: HEADERS too large for the server throws before the id is taken, so ids stay gapless
            SlabBuffer headers;
            try {
                headers = stream.encodeHeaders(id, peerHello.maxFramePayload());
            } catch (FrameTooLargeException e) {
                if (reserved) {
                    reservedSlots++; // still held: the stream releases it after its own lock
                }
                throw e;
            }
            nextStreamId += 2;
            if (nextStreamId < 0) {
                draining = true;
            }
            stream.assignId(id);
            streams.put(id, stream);
            send(headers, flush);
            return OPENED;
        }
    }

    /** Streams in this connection's table now (for tests). */
    int openStreams() {
        return streams.size();
    }

    /** The server's advertised limits (no limit before its HELLO, or when it advertised none). */
    public LimitsCapability peerLimits() {
        return peerLimits;
    }

    /** A queued stream ended before it got a slot; false if a slot was already reserved for it (see {@link #releaseSlot}). */
    public boolean stopWaiting(ClientStream<?, ?> stream) {
        synchronized (this) {
            return waiting.remove(stream);
        }
    }

    /** A stream given a reserved slot ended before it opened: the slot goes to the next waiting stream. */
    public void releaseSlot() {
        ClientStream<?, ?> next;
        synchronized (this) {
            reservedSlots--;
            next = nextWaiting();
        }
        if (next != null) {
            next.slotReady(this);
        }
    }

    /** With the lock held: reserves a free slot for the first waiting stream and returns it, or null. */
    private ClientStream<?, ?> nextWaiting() {
        if (waiting.isEmpty() || !acceptsNewStreams() || streams.size() + reservedSlots >= peerLimits.maxConcurrentStreams()) {
            return null;
        }
        reservedSlots++;
        return waiting.poll();
    }

    /** With the lock held: every waiting stream, which must now go to another connection. */
    private List<ClientStream<?, ?>> takeWaiting() {
        List<ClientStream<?, ?>> all = new java.util.ArrayList<>(waiting);
        waiting.clear();
        return all;
    }

    public Hello peerSettings() {
        return peerHello;
    }

    public void remove(ClientStream<?, ?> stream) {
        ClientStream<?, ?> next;
        synchronized (this) {
            if (!streams.remove(stream.id(), stream)) {
                return;
            }
            next = nextWaiting();
        }
        allowLateFrames();
        if (next != null) {
            next.slotReady(this);
        }
        if (draining && streams.isEmpty()) {
            close("drained after GOAWAY");
        }
    }

    @Override
    protected void onControlFramesExceeded() {
        channel.metrics().connectionClosedForControlFrames();
    }

    @Override
    protected void onGoAway(Frames.GoAway goAway) {
        List<ClientStream<?, ?>> open;
        List<ClientStream<?, ?>> notSent;
        synchronized (this) {
            // under open()'s lock: a stream is either registered before this (and judged below) or refused here
            draining = true;
            open = streams.snapshot();
            notSent = takeWaiting();
        }
        for (ClientStream<?, ?> w : notSent) {
            w.retryElsewhere();
        }
        Status s = Status.UNAVAILABLE.withDescription("server " + peer() + " is going away: " + goAway.status().getDescription());
        for (ClientStream<?, ?> st : open) {
            if (st.id() > goAway.lastStreamId()) {
                st.transportFailed(this, s);
            }
        }
        if (streams.isEmpty()) {
            close("GOAWAY and no open streams");
        }
    }

    @Override
    protected boolean onStreamFrame(int type, int flags, int streamId, int credit, MemorySegment memory, SlabBuffer holder,
                                    long offset, int length) {
        if (screenControlFrame(type, flags, streamId, credit, memory, offset, length)) {
            return false;
        }
        ClientStream<?, ?> s = streams.get(streamId);
        if (s == null) {
            if (streamId >= nextStreamIdVolatile() || (streamId & 1) == 0) {
                throw new ProtocolException(FrameType.name(type) + " for stream " + streamId + " which this client never opened");
            }
            // this client opens every odd id below nextStreamId, skipping none: the stream has ended here
            if (type != FrameType.MESSAGE) {
                chargeLateFrame(type, streamId);
            }
            return false;
        }
        switch (type) {
            case FrameType.HEADERS -> {
                Metadata md;
                try {
                    Frames.decodeResponseHeaders(reader, decoded, memory, offset, length, settings.maxMetadataBytes());
                    md = decoded.metadataOrNull();
                    decoded.clear();
                } catch (MetadataTooLargeException e) {
                    s.failLocally(this, streamId, e.toStatus());
                    return false;
                }
                s.onHeaders(this, streamId, md);
            }
            case FrameType.MESSAGE -> {
                return s.onMessageFrame(this, streamId, flags, memory, holder, offset, length);
            }
            case FrameType.TRAILERS -> {
                Status status;
                Metadata md;
                try {
                    Frames.decodeTrailers(reader, decoded, memory, offset, length, settings.maxMetadataBytes());
                    status = decoded.status();
                    md = decoded.metadataOrNull();
                    decoded.clear();
                } catch (MetadataTooLargeException e) {
                    status = e.toStatus();
                    md = null;
                }
                s.onTrailers(this, streamId, status, md);
            }
            case FrameType.WINDOW -> s.onWindow(this, streamId, credit);
            case FrameType.CANCEL -> s.onServerCancel(this, streamId, Frames.decodeCancel(memory.asSlice(offset, length)));
            case FrameType.END_STREAM -> throw new ProtocolException("END_STREAM from a server (servers end streams with TRAILERS)");
            default -> throw new ProtocolException("unexpected " + FrameType.name(type) + " frame from a server");
        }
        return false;
    }

    private synchronized int nextStreamIdVolatile() {
        return nextStreamId;
    }

    /** Whether the transport closed this connection to dial the server again in the protocol it answered with. */
    boolean switchesProtocol() {
        return switchesProtocol;
    }

    @Override
    protected void connectionClosed(String reason, Throwable cause) {
        switchesProtocol = cause instanceof ProtocolSwitchException && !ready.isDone();
        Status s = unavailable("connection to", authority, reason);
        if (cause != null && !(cause instanceof ProtocolException)) {
            s = s.withCause(cause);
        }
        closeStatus = s;
        failPings(s);
        ready.completeExceptionally(s.asException());
        List<ClientStream<?, ?>> all = streams.takeAll();
        List<ClientStream<?, ?>> notSent;
        synchronized (this) {
            notSent = takeWaiting();
        }
        for (ClientStream<?, ?> st : all) {
            st.transportFailed(this, s);
        }
        for (ClientStream<?, ?> w : notSent) {
            w.retryElsewhere();
        }
        channel.connectionClosed(this, s);
    }

    /** Why the connection closed, or null while open. */
    Status closeStatus() {
        return closeStatus;
    }

    /** Sends a control frame for a stream (CANCEL, WINDOW) on the current path. */
    public void sendControl(SlabBuffer frame) {
        send(frame, true);
    }
}
