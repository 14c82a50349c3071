package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The client side of one connection: opens streams, routes their frames, fails them when it closes. */
final class ClientConnection extends Connection {
    private final String authority;
    private final StreamTable<ClientStream<?, ?>> streams = new StreamTable<>();
    private final CompletableFuture<ClientConnection> ready = new CompletableFuture<>();
    private int nextStreamId = 1;
    private volatile boolean draining;
    private volatile Status closeStatus;

    private final ChannelImpl channel;

    ClientConnection(ConnectionSettings settings, FrameConnection base, String authority, ChannelImpl channel) {
        super(settings, base, ConnectionGuards.DEFAULT.newControlFrameBudget());
        this.authority = authority;
        this.channel = channel;
    }

    @Override
    void streamsWritable() {
        for (ClientStream<?, ?> s : streams.snapshot()) {
            s.onConnectionWritable();
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
    void onHello(Hello hello) {
        if (peerHello != null) {
            throw new ProtocolException("second HELLO");
        }
        base.setMaxInboundPayload(settings.maxFramePayload());
        peerHello = hello;
        if (completeClientUpgrade(hello)) {
            ready.complete(this);
        }
    }

    /**
     * Registers the stream under a new id and sends its HEADERS, atomically so that ids reach the
     * server in increasing order. Returns false if the connection can no longer take streams.
     */
    boolean open(ClientStream<?, ?> stream, boolean flush) {
        synchronized (this) {
            if (!acceptsNewStreams()) {
                return false;
            }
            int id = nextStreamId;
            // encoded first: HEADERS too large for the server throws before the id is taken, so ids stay gapless
            SlabBuffer headers = stream.encodeHeaders(id, peerHello.maxFramePayload());
            nextStreamId += 2;
            if (nextStreamId < 0) {
                draining = true;
            }
            stream.assignId(id);
            streams.put(id, stream);
            send(headers, flush);
            return true;
        }
    }

    Hello peerSettings() {
        return peerHello;
    }

    void remove(ClientStream<?, ?> stream) {
        streams.remove(stream.id(), stream);
        allowLateFrames();
        if (draining && streams.isEmpty()) {
            close("drained after GOAWAY");
        }
    }

    @Override
    void onControlFramesExceeded() {
        channel.metrics().connectionClosedForControlFrames();
    }

    @Override
    void onGoAway(Frames.GoAway goAway) {
        List<ClientStream<?, ?>> open;
        synchronized (this) {
            // under open()'s lock: a stream is either registered before this (and judged below) or refused here
            draining = true;
            open = streams.snapshot();
        }
        Status s = Status.UNAVAILABLE.withDescription("server " + peer() + " is going away: " + goAway.status().getDescription());
        for (ClientStream<?, ?> st : open) {
            if (st.id() > goAway.lastStreamId()) {
                st.transportFailed(s);
            }
        }
        if (streams.isEmpty()) {
            close("GOAWAY and no open streams");
        }
    }

    @Override
    void onStreamFrame(int type, int flags, int streamId, int credit, MemorySegment memory, long offset, int length) {
        if (type == FrameType.WINDOW) {
            if (streamId == 0) {
                // connection credit belongs to the RDMA transport, which consumes it: over TCP it does nothing
                chargeControlFrame(type, "a WINDOW on stream 0");
                return;
            }
            if (credit <= 0) {
                throw new ProtocolException("WINDOW on stream " + streamId + " grants " + credit + " bytes (must be positive)");
            }
        } else if (type == FrameType.MESSAGE && length == 0 && (flags & FrameFlags.BEGIN) == 0) {
            chargeControlFrame(type, "an empty MESSAGE continuation on stream " + streamId);
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
            return;
        }
        switch (type) {
            case FrameType.HEADERS -> s.onHeaders(Frames.decodeResponseHeaders(memory, offset, length));
            case FrameType.MESSAGE -> s.onMessageFrame(flags, memory, offset, length);
            case FrameType.TRAILERS -> s.onTrailers(Frames.decodeTrailers(memory, offset, length));
            case FrameType.WINDOW -> s.onWindow(credit);
            case FrameType.CANCEL -> s.onServerCancel(Frames.decodeCancel(memory.asSlice(offset, length)));
            case FrameType.END_STREAM -> throw new ProtocolException("END_STREAM from a server (servers end streams with TRAILERS)");
            default -> throw new ProtocolException("unexpected " + FrameType.name(type) + " frame from a server");
        }
    }

    private synchronized int nextStreamIdVolatile() {
        return nextStreamId;
    }

    @Override
    void connectionClosed(String reason, Throwable cause) {
        Status s = unavailable("connection to", authority, reason);
        if (cause != null && !(cause instanceof ProtocolException)) {
            s = s.withCause(cause);
        }
        closeStatus = s;
        failPings(s);
        ready.completeExceptionally(s.asException());
        List<ClientStream<?, ?>> all = streams.takeAll();
        for (ClientStream<?, ?> st : all) {
            st.transportFailed(s);
        }
        channel.connectionClosed(this, s);
    }

    /** Why the connection closed, or null while open. */
    Status closeStatus() {
        return closeStatus;
    }

    /** Sends a control frame for a stream (CANCEL, WINDOW) on the current path. */
    void sendControl(SlabBuffer frame) {
        send(frame, true);
    }
}
