package dev.rdmarpc.grpc;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCall;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerTransport;
import io.grpc.internal.ServerTransportListener;
import io.grpc.internal.SharedResourceHolder;
import io.grpc.internal.StatsTraceContext;

import java.io.InputStream;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one grpc server transport standing for every connection of the rdmarpc server: each rdmarpc
 * call becomes a grpc {@link RdmaServerStream} handed to grpc's {@code ServerImpl}.
 */
final class RdmaServerTransport implements ServerTransport {
    private final InternalLogId logId;
    private final RdmaInternalServer owner;
    private final RpcServer server;
    private final List<? extends ServerStreamTracer.Factory> tracerFactories;
    private final int maxInboundMetadataSize;
    private final int maxInboundMessageSize;
    private final ScheduledExecutorService scheduler = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    private final AtomicBoolean watchingTermination = new AtomicBoolean();
    private final AtomicBoolean terminated = new AtomicBoolean();
    private volatile ServerTransportListener listener;
    private volatile Attributes attributes = Attributes.EMPTY;

    RdmaServerTransport(RdmaInternalServer owner, RpcServer server, List<? extends ServerStreamTracer.Factory> tracerFactories,
                        int maxInboundMetadataSize, int maxInboundMessageSize) {
        this.owner = owner;
        this.server = server;
        this.tracerFactories = tracerFactories;
        this.maxInboundMetadataSize = maxInboundMetadataSize;
        this.maxInboundMessageSize = maxInboundMessageSize;
        this.logId = InternalLogId.allocate(getClass(), String.valueOf(owner.listenAddress()));
    }

    /** grpc's listener for this transport; set before the server listens, so every call finds it. */
    void listener(ServerTransportListener transportListener) {
        this.listener = transportListener;
    }

    /** The server listens: the transport is ready for grpc. */
    void ready(ServerTransportListener transportListener) {
        Attributes base = Attributes.newBuilder()
                .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, owner.listenAddress())
                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, SecurityLevel.NONE)
                .build();
        attributes = transportListener.transportReady(base);
    }

    /** The server could not listen: grpc forgets the transport. */
    void startFailed() {
        terminate();
    }

    /** rdmarpc's handler for every call: grpc takes it from here (its ServerImpl finds the method). */
    ServerCall.Listener<InputStream> startCall(ServerCall<InputStream, InputStream> call, dev.rdmarpc.core.Metadata coreHeaders) {
        ServerTransportListener l = listener;
        if (l == null) {
            call.close(dev.rdmarpc.core.Status.UNAVAILABLE.withDescription("server is starting"), null);
            return new ServerCall.Listener<>() {
            };
        }
        if (Headers.size(coreHeaders) > maxInboundMetadataSize) {
            call.close(dev.rdmarpc.core.Status.RESOURCE_EXHAUSTED.withDescription("request headers of " + Headers.size(coreHeaders)
                    + " bytes exceed the server's maximum inbound metadata size " + maxInboundMetadataSize), null);
            return new ServerCall.Listener<>() {
            };
        }
        Metadata headers = Headers.toGrpc(coreHeaders, Headers.RECEIVED_REQUEST_EXCLUDED);
        Deadline deadline = call.getDeadline();
        if (deadline != null) {
            // grpc's ServerImpl makes the call's Context deadline from this header.
            headers.put(GrpcUtil.TIMEOUT_KEY, Math.max(0, deadline.remainingNanos()));
        }
        String method = call.getMethodDescriptor().getFullMethodName();
        StatsTraceContext stats = StatsTraceContext.newServerContext(tracerFactories, method, headers);
        RdmaServerStream stream = new RdmaServerStream(this, call, stats);
        l.streamCreated(stream, method, headers);
        stream.signalInitialReadiness();
        return stream.callListener();
    }

    /** The server's largest request message, applied to decompressed requests as well (as grpc does). */
    int maxInboundMessageSize() {
        return maxInboundMessageSize;
    }

    Attributes attributes() {
        return attributes;
    }

    RdmaInternalServer owner() {
        return owner;
    }

    @Override
    public void shutdown() {
        server.shutdown();
        watchTermination();
    }

    @Override
    public void shutdownNow(Status reason) {
        server.shutdownNow();
        watchTermination();
    }

    /** Reports termination to grpc once every rdmarpc connection has closed. */
    private void watchTermination() {
        if (!watchingTermination.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(() -> {
            try {
                while (!server.awaitTermination(1, TimeUnit.SECONDS)) {
                    // keep waiting: calls in flight finish first
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            terminate();
        }, "rdmarpc-grpc-server-termination");
        t.setDaemon(true);
        t.start();
    }

    private void terminate() {
        if (terminated.compareAndSet(false, true)) {
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, scheduler);
            ServerTransportListener l = listener;
            if (l != null) {
                l.transportTerminated();
            }
        }
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return scheduler;
    }

    @Override
    public InternalLogId getLogId() {
        return logId;
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        SettableFuture<SocketStats> f = SettableFuture.create();
        f.set(null);
        return f;
    }

    @Override
    public String toString() {
        return "RdmaServerTransport{" + logId.getId() + ", " + owner.listenAddress() + "}";
    }
}
