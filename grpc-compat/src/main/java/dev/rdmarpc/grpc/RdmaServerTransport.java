package dev.rdmarpc.grpc;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.SettableFuture;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.PeerConnection;
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
import io.grpc.internal.KeepAliveManager;
import io.grpc.internal.KeepAliveEnforcer;
import io.grpc.internal.MaxConnectionIdleManager;
import io.grpc.internal.ServerListener;
import io.grpc.internal.ServerTransport;
import io.grpc.internal.ServerTransportListener;
import io.grpc.internal.SharedResourceHolder;
import io.grpc.internal.StatsTraceContext;

import java.io.InputStream;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One grpc server transport per rdmarpc client connection, as grpc-netty has one per HTTP/2
 * connection: created when the connection has exchanged HELLO, terminated once it has closed and
 * its streams are gone. Each call on the connection becomes a grpc {@link RdmaServerStream} handed
 * to grpc's {@code ServerImpl}. The transport runs grpc's {@link KeepAliveManager} (PINGs through
 * {@link PeerConnection#ping()}, the connection closed when one goes unanswered) and
 * {@link MaxConnectionIdleManager}, and ages the connection out, as configured.
 */
final class RdmaServerTransport implements ServerTransport {
    private static final Logger LOG = Logger.getLogger(RdmaServerTransport.class.getName());
    /** Why the connection of a client that pings too often is closed, in grpc-netty's words. */
    static final String TOO_MANY_PINGS = "too_many_pings";

    /**
     * One thread for every transport's idle and age timers: grpc's {@link MaxConnectionIdleManager}
     * is not thread-safe, so all its calls and its own timer run on this thread.
     */
    static final SharedResourceHolder.Resource<ScheduledExecutorService> CONNECTION_TIMER = new SharedResourceHolder.Resource<>() {
        @Override
        public ScheduledExecutorService create() {
            ScheduledThreadPoolExecutor e = (ScheduledThreadPoolExecutor) Executors.newScheduledThreadPool(1, r -> {
                Thread t = new Thread(r, "rdmarpc-grpc-connection-timer");
                t.setDaemon(true);
                return t;
            });
            e.setRemoveOnCancelPolicy(true);
            return e;
        }

        @Override
        public void close(ScheduledExecutorService instance) {
            instance.shutdown();
        }

        @Override
        public String toString() {
            return "rdmarpc-grpc-connection-timer";
        }
    };

    private final InternalLogId logId;
    private final RdmaInternalServer owner;
    private final PeerConnection connection;
    private final List<? extends ServerStreamTracer.Factory> tracerFactories;
    private final int maxInboundMetadataSize;
    private final int maxInboundMessageSize;
    private final ServerSettings.Connections limits;
    private final ScheduledExecutorService scheduler = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    /** The idle and age timers' thread, or null when neither is configured. */
    private final ScheduledExecutorService connectionTimer;
    private final KeepAliveManager keepAlive;
    private final MaxConnectionIdleManager idle;
    /** Counts the client's PINGs against permitKeepAliveTime; guarded by {@link #lock}. */
    private final KeepAliveEnforcer pings;
    /** Whether a response went out since the client's last PING (its strikes then start over). */
    private volatile boolean respondedSincePing;
    private final AtomicBoolean goAwaySent = new AtomicBoolean();
    private final Object lock = new Object();
    private volatile ServerTransportListener listener;
    private volatile Attributes attributes = Attributes.EMPTY;

    // guarded by lock
    private int openStreams;
    private boolean connectionClosed;
    private boolean terminated;
    private ScheduledFuture<?> ageTimer;
    private ScheduledFuture<?> graceTimer;

    RdmaServerTransport(RdmaInternalServer owner, PeerConnection connection, List<? extends ServerStreamTracer.Factory> tracerFactories,
                        ServerSettings settings) {
        this.owner = owner;
        this.connection = connection;
        this.tracerFactories = tracerFactories;
        this.maxInboundMetadataSize = settings.maxInboundMetadataSize();
        this.maxInboundMessageSize = settings.maxInboundMessageSize();
        this.limits = settings.connections();
        this.logId = InternalLogId.allocate(getClass(), String.valueOf(connection.remoteAddress()));
        this.connectionTimer = limits.needsTimer() ? SharedResourceHolder.get(CONNECTION_TIMER) : null;
        this.keepAlive = limits.keepAliveEnabled()
                ? new KeepAliveManager(new Pinger(), scheduler, limits.keepAliveTimeNanos(), limits.keepAliveTimeoutNanos(), true)
                : null;
        this.idle = limits.maxConnectionIdleNanos() != ServerSettings.NEVER
                ? new MaxConnectionIdleManager(limits.maxConnectionIdleNanos())
                : null;
        this.pings = new KeepAliveEnforcer(limits.permitKeepAliveWithoutCalls(), limits.permitKeepAliveTimeNanos(),
                TimeUnit.NANOSECONDS);
    }

    /**
     * The client sent a PING (core's I/O thread). Past grpc's allowance of pings closer than permitKeepAliveTime its
     * connection is closed for "too_many_pings" (grpc-netty also names that in a GOAWAY; core's close sends none).
     */
    void pingReceived() {
        boolean acceptable;
        synchronized (lock) {
            if (respondedSincePing) {
                respondedSincePing = false;
                pings.resetCounters();
            }
            acceptable = pings.pingAcceptable();
        }
        if (!acceptable) {
            LOG.log(Level.FINE, "{0}: too many pings, closing", this);
            goAwaySent.set(true);
            connection.close(TOO_MANY_PINGS);
        }
    }

    /**
     * The server sent a response's headers or a message: as in grpc-netty, the client's ping strikes start over (at
     * its next PING; a plain flag here, so a message costs no lock).
     */
    void responseSent() {
        if (!respondedSincePing) {
            respondedSincePing = true;
        }
    }

    /** The connection exchanged HELLO: grpc learns of the transport, and it is ready at once. */
    void start(ServerListener serverListener) {
        ServerTransportListener l = serverListener.transportCreated(this);
        listener = l;
        // Under TLS the session names the client; after an RDMA upgrade it is still the session that authenticated
        // the client and the upgrade (whose calls then cross the fabric unencrypted: rdmaUnderTls AUTHENTICATE_ONLY)
        javax.net.ssl.SSLSession ssl = connection.sslSession();
        Attributes.Builder base = Attributes.newBuilder()
                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, ssl != null ? SecurityLevel.PRIVACY_AND_INTEGRITY : SecurityLevel.NONE)
                .set(RdmaAttributes.TRANSPORT, connection.transportName());
        if (ssl != null) {
            base.set(Grpc.TRANSPORT_ATTR_SSL_SESSION, ssl);
        }
        SocketAddress remote = connection.remoteAddress();
        if (remote != null) {
            base.set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, remote);
        }
        SocketAddress local = connection.localAddress() != null ? connection.localAddress() : owner.listenAddress();
        if (local != null) {
            base.set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, local);
        }
        attributes = l.transportReady(base.build());
        if (keepAlive != null) {
            keepAlive.onTransportStarted();
        }
        if (idle != null) {
            onConnectionTimer(() -> idle.start(() -> goAway("max_idle"), connectionTimer));
        }
        long age = limits.maxConnectionAgeNanos();
        if (age != ServerSettings.NEVER) {
            // grpc-netty's jitter: ±10% per connection, so connections opened together do not all go at once.
            long jittered = (long) ((0.9 + ThreadLocalRandom.current().nextDouble() * 0.2) * age);
            synchronized (lock) {
                if (!connectionClosed) {
                    ageTimer = schedule(this::maxAgeReached, jittered);
                }
            }
        }
    }

    private void maxAgeReached() {
        goAway("max_age");
        long grace = limits.maxConnectionAgeGraceNanos();
        if (grace != ServerSettings.NEVER) {
            synchronized (lock) {
                if (!connectionClosed) {
                    graceTimer = schedule(() -> connection.close("max connection age grace ("
                            + TimeUnit.NANOSECONDS.toMillis(grace) + " ms) elapsed with calls still open"), grace);
                }
            }
        }
    }

    private ScheduledFuture<?> schedule(Runnable task, long nanos) {
        try {
            return connectionTimer.schedule(task, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    private void onConnectionTimer(Runnable task) {
        try {
            connectionTimer.execute(task);
        } catch (RejectedExecutionException e) {
            // released after termination: nothing left to time
        }
    }

    /** GOAWAY once: no new calls on the connection, closed when its calls end (the client reconnects for new ones). */
    private void goAway(String why) {
        if (goAwaySent.compareAndSet(false, true)) {
            LOG.log(Level.FINE, "{0}: GOAWAY ({1})", new Object[] {this, why});
            connection.goAway();
        }
    }

    /** The server is shutting down (core has sent GOAWAY on every connection itself). */
    void goAwaySentByServer() {
        goAwaySent.set(true);
    }

    /** rdmarpc's handler for a call on this connection: grpc takes it from here (its ServerImpl finds the method). */
    ServerCall.Listener<InputStream> startCall(ServerCall<InputStream, InputStream> call, dev.rdmarpc.core.Metadata coreHeaders) {
        dataReceived();
        ServerTransportListener l = listener;
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
        streamOpened();
        l.streamCreated(stream, method, headers);
        stream.signalInitialReadiness();
        return stream.callListener();
    }

    /** Something arrived from the client: keepalive need not ping for a while (grpc-netty reports every read). */
    void dataReceived() {
        if (keepAlive != null) {
            keepAlive.onDataReceived();
        }
    }

    private void streamOpened() {
        synchronized (lock) {
            if (openStreams++ == 0) {
                pings.onTransportActive();
                if (idle != null) {
                    onConnectionTimer(idle::onTransportActive);
                }
            }
        }
    }

    /** A stream's grpc listener has been closed. */
    void streamClosed() {
        boolean terminate;
        synchronized (lock) {
            if (--openStreams == 0) {
                pings.onTransportIdle();
                if (idle != null && !connectionClosed) {
                    onConnectionTimer(idle::onTransportIdle);
                }
            }
            terminate = openStreams == 0 && connectionClosed && !terminated;
            if (terminate) {
                terminated = true;
            }
        }
        if (terminate) {
            terminate();
        }
    }

    /** The rdmarpc connection closed: grpc is told the transport terminated once its streams are closed too. */
    void connectionClosed(String reason) {
        boolean terminate;
        synchronized (lock) {
            connectionClosed = true;
            if (ageTimer != null) {
                ageTimer.cancel(false);
            }
            if (graceTimer != null) {
                graceTimer.cancel(false);
            }
            terminate = openStreams == 0 && !terminated;
            if (terminate) {
                terminated = true;
            }
        }
        LOG.log(Level.FINE, "{0}: connection closed ({1})", new Object[] {this, reason});
        if (keepAlive != null) {
            keepAlive.onTransportTermination();
        }
        if (idle != null) {
            onConnectionTimer(idle::onTransportTermination);
        }
        if (terminate) {
            terminate();
        }
    }

    private void terminate() {
        SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, scheduler);
        if (connectionTimer != null) {
            SharedResourceHolder.release(CONNECTION_TIMER, connectionTimer);
        }
        ServerTransportListener l = listener;
        if (l != null) {
            l.transportTerminated();
        }
    }

    /** The server's largest request message, applied to decompressed requests as well (as grpc does). */
    int maxInboundMessageSize() {
        return maxInboundMessageSize;
    }

    /** The transport's attributes as grpc's {@code ServerTransportFilter}s left them; every stream's. */
    Attributes attributes() {
        return attributes;
    }

    PeerConnection connection() {
        return connection;
    }

    /** Graceful: GOAWAY; the connection closes once its calls end. */
    @Override
    public void shutdown() {
        goAway("shutdown");
    }

    /** Now: the connection closes and its calls fail UNAVAILABLE. */
    @Override
    public void shutdownNow(Status reason) {
        goAwaySent.set(true);
        connection.close(reason.getDescription() != null ? reason.getDescription() : reason.getCode().toString());
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
        return "RdmaServerTransport{" + logId.getId() + ", " + connection + "}";
    }

    /** grpc-netty's server pinger: PING the client; none answered within the timeout closes the connection. */
    private final class Pinger implements KeepAliveManager.KeepAlivePinger {
        @Override
        public void ping() {
            connection.ping().whenComplete((rtt, error) -> {
                if (error == null) {
                    dataReceived();
                }
                // a failed ping means the connection closed: connectionClosed reports it
            });
        }

        @Override
        public void onPingTimeout() {
            connection.close("Keepalive failed. The connection is likely gone");
        }
    }
}
