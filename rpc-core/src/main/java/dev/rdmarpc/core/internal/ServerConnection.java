package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.protocol.RequestHeaders;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import dev.rdmarpc.core.spi.FrameConnection;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** The server side of one connection: answers HELLO, opens a stream per HEADERS, routes frames. */
final class ServerConnection extends Connection implements dev.rdmarpc.core.PeerConnection {
    final ServerImpl server;
    private final StreamTable<ServerStream<?, ?>> streams = new StreamTable<>();
    /** Method paths and authorities of this connection's HEADERS, decoded once (frames arrive on one thread). */
    private final dev.rdmarpc.core.protocol.Utf8Cache headerStrings = new dev.rdmarpc.core.protocol.Utf8Cache(64);
    private int lastStreamId;
    private volatile boolean goingAway;
    private final ScheduledFuture<?> helloTimeout;

    ServerConnection(ServerImpl server, ConnectionSettings settings, FrameConnection base) {
        super(settings, base);
        this.server = server;
        base.setMaxInboundPayload(settings.maxFramePayload());
        long ms = server.handshakeTimeoutMillis();
        this.helloTimeout = RpcExecutors.timer().schedule(() -> {
            if (peerHello == null) {
                close("no HELLO within " + ms + " ms");
            }
        }, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    void onHello(Hello hello) {
        if (peerHello != null) {
            throw new ProtocolException("second HELLO");
        }
        helloTimeout.cancel(false);
        ConnectionUpgrader[] chosen = new ConnectionUpgrader[1];
        ConnectionUpgrader.Offer offer = tryServerUpgrade(hello, chosen);
        if (offer == null && settings.mode() == dev.rdmarpc.core.TransportMode.RDMA) {
            throw new ProtocolException("this server requires the RDMA transport, and the client cannot use it");
        }
        peerHello = hello;
        send(Frames.hello(settings.pool(), localHello(false, offer, chosen[0])), true);
        if (pendingUpgrade != null) {
            out = pendingUpgrade;
        }
        server.metrics().connectionOpened(out.transportName());
        server.connectionOpened(this);
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
    void onGoAway(Frames.GoAway goAway) {
        // A client going away closes its connection itself; nothing to do until it does.
    }

    @Override
    void onStreamFrame(int type, int flags, int streamId, int credit, MemorySegment memory, long offset, int length) {
        if (type == FrameType.HEADERS) {
            onHeaders(flags, streamId, memory, offset, length);
            return;
        }
        if (type == FrameType.WINDOW && streamId == 0) {
            return; // connection-level credit: reserved for the RDMA transport
        }
        ServerStream<?, ?> s = streams.get(streamId);
        if (s == null) {
            if (streamId > lastStreamId) {
                throw new ProtocolException(FrameType.name(type) + " for unknown stream " + streamId);
            }
            return; // a finished stream: late frames are dropped
        }
        switch (type) {
            case FrameType.MESSAGE -> s.onMessageFrame(flags, memory, offset, length);
            case FrameType.END_STREAM -> s.onEndStream();
            case FrameType.CANCEL -> s.onClientCancel(Frames.decodeCancel(memory.asSlice(offset, length)));
            case FrameType.WINDOW -> s.onWindow(credit);
            default -> throw new ProtocolException("unexpected " + FrameType.name(type) + " frame from a client");
        }
    }

    private void onHeaders(int flags, int streamId, MemorySegment memory, long offset, int length) {
        if ((streamId & 1) == 0 || streamId <= lastStreamId) {
            throw new ProtocolException("HEADERS opens stream " + streamId + ", which is not odd and above the last one (" + lastStreamId + ")");
        }
        lastStreamId = streamId;
        RequestHeaders rh = Frames.decodeRequestHeaders(memory, offset, length, headerStrings);
        if (goingAway) {
            send(Frames.trailers(settings.pool(), streamId,
                    Status.UNAVAILABLE.withDescription("server is shutting down"), null), true);
            return;
        }
        ServerMethodDefinition<?, ?> def = server.lookup(rh.path());
        if (def == null) {
            send(Frames.trailers(settings.pool(), streamId,
                    Status.UNIMPLEMENTED.withDescription("Method not found: " + rh.path()), null), true);
            return;
        }
        ServerStream<?, ?> s = new ServerStream<>(this, streamId, def, rh.metadata(), rh.authority(), rh.timeoutNanos(),
                (flags & FrameFlags.END_STREAM) != 0);
        streams.put(streamId, s);
        s.start();
    }

    void remove(ServerStream<?, ?> s) {
        streams.remove(s.id(), s);
        if (goingAway && streams.isEmpty()) {
            close("server shut down");
        }
    }

    /** Graceful shutdown: refuse new streams, close once the open ones finish. */
    @Override
    public void goAway() {
        goingAway = true;
        if (!isClosed() && peerHello != null) {
            send(Frames.goAway(settings.pool(), lastStreamId, Status.UNAVAILABLE.withDescription("server is shutting down")), true);
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
    void connectionClosed(String reason, Throwable cause) {
        helloTimeout.cancel(false);
        if (peerHello != null) {
            server.metrics().connectionClosed(out.transportName());
        }
        for (ServerStream<?, ?> s : streams.takeAll()) {
            s.connectionClosed();
        }
        server.connectionClosed(this, peerHello != null, reason);
    }
}
