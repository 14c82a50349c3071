package dev.rdmarpc.core.internal.channel;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.call.ClientStream;
import dev.rdmarpc.core.internal.call.RecycledStreams;
import dev.rdmarpc.core.internal.call.StreamParts;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.connection.KeepAlive;
import dev.rdmarpc.core.internal.connection.Transports;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.metrics.CallMetrics;
import dev.rdmarpc.core.internal.metrics.MicrometerCallMetrics;
import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.FrameConnection;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The client channel behind {@link dev.rdmarpc.core.RpcChannel} and {@link dev.rdmarpc.core.RpcConnection}: one
 * connection to its target at a time, opened on first use and again after it closes or the server sends GOAWAY.
 * After a failed attempt, calls fail at once with its UNAVAILABLE until the {@link ConnectBackoff} lets the next one
 * start (when the channel has one); a connection may get client keepalive ({@link KeepAlive}).
 * Internal: public for those two and for the calls.
 */
public final class ChannelImpl {
    private final String host;
    private final int port;
    private final String authority;
    private final byte[] encodedAuthority;
    private final java.util.concurrent.ConcurrentHashMap<String, byte[]> encodedPaths = new java.util.concurrent.ConcurrentHashMap<>();
    private final ClientTransport transport;
    private final ConnectionSettings settings;
    private final Executor executor;
    private final Duration defaultTimeout;
    private final int connectTimeoutMillis;
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final CallMetrics metrics;
    /** Flow-control parts recycled between this channel's calls. */
    private final StreamParts parts;
    /** Ended calls' streams kept for the next pooled unary calls ({@link #startPooledUnary}). */
    private final RecycledStreams<ClientStream<?, ?>> recycled = new RecycledStreams<>();

    private ClientConnection current;
    private CompletableFuture<ClientConnection> pending;
    /** Client keepalive: PING after this much silence (0: off), and how long to wait for an answer. */
    private final long keepAliveTimeNanos;
    private final long keepAliveTimeoutNanos;
    /** Spaces connection attempts; null for none (every call may start one). Guarded by this. */
    private final ConnectBackoff backoff;
    /** Why the last attempt failed, while no new one may start (before {@link #retryAtNanos}); else null. */
    private Status lastFailure;
    private long retryAtNanos;
    private int activeCalls;
    private boolean shutdown;
    private volatile java.util.function.Consumer<Status> closedListener;

    public ChannelImpl(String host, int port, ClientTransport transport, ConnectionSettings settings,
                       Executor executor, Duration defaultTimeout, int connectTimeoutMillis, Object meterRegistry,
                       ClientLiveness liveness) {
        this.keepAliveTimeNanos = liveness.keepAliveTimeNanos();
        this.keepAliveTimeoutNanos = liveness.keepAliveTimeoutNanos();
        this.backoff = liveness.backoffInitialNanos() > 0
                ? new ConnectBackoff(liveness.backoffInitialNanos(), liveness.backoffMaxNanos(),
                        java.util.concurrent.ThreadLocalRandom.current()::nextDouble)
                : null;
        this.metrics = meterRegistry == null ? CallMetrics.NOOP : MicrometerCallMetrics.create(meterRegistry, "client", settings.pool(),
                Transports.upgraders());
        this.host = host;
        this.port = port;
        this.authority = host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        this.encodedAuthority = utf8(authority);
        this.transport = transport;
        this.settings = settings;
        this.executor = executor;
        this.defaultTimeout = defaultTimeout;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.parts = new StreamParts(settings.pool(), settings.maxMessageSize(), settings.maxAttachmentBytes(),
                settings.initialWindow());
    }

    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
        return new ClientStream<>(this, method, options, false);
    }

    /**
     * The channel's unary entry: runs a plain async unary call ({@link DirectUnaryCall#runUnary}) that ends into
     * {@code observer}, on a stream nobody else sees, reused from an ended call when one is kept; always true (the
     * call was made).
     */
    public <ReqT, RespT> boolean startPooledUnary(MethodDescriptor<ReqT, RespT> method, CallOptions options, ReqT request,
                                                  StreamObserver<RespT> observer) {
        @SuppressWarnings("unchecked")
        ClientStream<ReqT, RespT> stream = (ClientStream<ReqT, RespT>) recycled.take();
        if (stream == null) {
            stream = new ClientStream<>(this, method, options, true);
        } else {
            stream.reuse(method, options);
        }
        stream.runUnary(request, observer);
        return true;
    }

    /** The streams kept for later pooled calls: an ended pooled stream, every field cleared, gives itself back here. */
    public RecycledStreams<ClientStream<?, ?>> recycled() {
        return recycled;
    }

    public String authority() {
        return authority;
    }

    /** The authority as sent in HEADERS, encoded once. */
    public byte[] encodedAuthority() {
        return encodedAuthority;
    }

    /** A method's path as sent in HEADERS, encoded once per method. */
    public byte[] encodedPath(dev.rdmarpc.core.MethodDescriptor<?, ?> method) {
        return encodedPaths.computeIfAbsent(method.getFullMethodName(), ChannelImpl::utf8);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    public CallMetrics metrics() {
        return metrics;
    }

    public StreamParts parts() {
        return parts;
    }

    public SlabPool pool() {
        return settings.pool();
    }

    public Executor executor() {
        return executor;
    }

    public Duration defaultTimeout() {
        return defaultTimeout;
    }

    public int maxInboundMessageSize() {
        return settings.maxMessageSize();
    }

    public int maxInboundAttachmentSize() {
        return settings.maxAttachmentBytes();
    }

    int initialWindow() {
        return settings.initialWindow();
    }

    public synchronized boolean callStarted() {
        if (shutdown) {
            return false;
        }
        activeCalls++;
        return true;
    }

    public void callFinished() {
        boolean last;
        synchronized (this) {
            activeCalls--;
            last = shutdown && activeCalls == 0;
        }
        if (last) {
            terminate("channel shut down");
        }
    }

    /** The transport name of the current connection ("tcp", "rdma"), or null when not connected. */
    public synchronized String currentTransport() {
        return current != null && !current.isClosed() ? current.out.transportName() : null;
    }

    /** The current connection's TLS session, or null (see {@code RpcChannel.currentSslSession}). */
    public synchronized javax.net.ssl.SSLSession currentSslSession() {
        return current != null && !current.isClosed() ? current.out.sslSession() : null;
    }

    /**
     * Sends a PING on the channel's connection (connecting first if needed; after shutdown, on the connection still
     * finishing calls, if any): completes with the round-trip time in nanoseconds when the server acknowledges it, or
     * fails with UNAVAILABLE when there is no connection or it closes before the ACK.
     */
    public CompletableFuture<Long> ping() {
        ClientConnection draining = null;
        synchronized (this) {
            if (shutdown && current != null && !current.isClosed()) {
                draining = current; // shut down but still finishing calls: its connection is still worth checking
            }
        }
        if (draining != null) {
            return draining.ping();
        }
        return connection().thenCompose(ClientConnection::ping);
    }

    /** A connection that accepts new streams: the current one, or one being opened. */
    public synchronized CompletableFuture<ClientConnection> connection() {
        if (shutdown) {
            return CompletableFuture.failedFuture(Status.UNAVAILABLE.withDescription("channel to " + authority + " is shut down").asException());
        }
        if (pending != null && !pending.isDone()) {
            return pending;
        }
        if (current != null && current.acceptsNewStreams() && current.ready().isDone()) {
            return current.ready();
        }
        long now = System.nanoTime();
        if (lastFailure != null && now - retryAtNanos < 0) {
            return CompletableFuture.failedFuture(lastFailure.withDescription(lastFailure.getDescription()
                    + " (next attempt in " + TimeUnit.NANOSECONDS.toMillis(retryAtNanos - now) + " ms)").asException());
        }
        lastFailure = null;
        long backoffNanos = backoff != null ? backoff.attemptStarted() : 0;
        long nextAttemptNanos = now + backoffNanos;
        int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(
                ConnectBackoff.attemptTimeoutNanos(backoffNanos, TimeUnit.MILLISECONDS.toNanos(connectTimeoutMillis))));
        CompletableFuture<ClientConnection> result = new CompletableFuture<>();
        pending = result;
        // with a backoff, the attempt's outcome is recorded before the callers waiting on result learn it
        CompletableFuture<ClientConnection> attempt = backoff == null ? result : new CompletableFuture<>();
        if (backoff != null) {
            attempt.whenComplete((c, e) -> {
                attemptEnded(e, nextAttemptNanos);
                if (e == null) {
                    result.complete(c);
                } else {
                    result.completeExceptionally(e);
                }
            });
        }
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(host, port);
            if (address.isUnresolved()) {
                throw new java.net.UnknownHostException(host);
            }
        } catch (Exception e) {
            attempt.completeExceptionally(Status.UNAVAILABLE.withDescription("cannot resolve " + authority + ": " + e).withCause(e).asException());
            return result;
        }
        dial(address, attempt, settings, timeoutMillis);
        return result;
    }

    /** An attempt ended: a success resets the backoff; after a failure no attempt starts before {@code nextAttemptNanos}. */
    private synchronized void attemptEnded(Throwable error, long nextAttemptNanos) {
        if (error == null) {
            backoff.reset();
            lastFailure = null;
        } else {
            lastFailure = Status.fromThrowable(error);
            retryAtNanos = nextAttemptNanos;
        }
    }

    /** Lets the next call start a connection attempt at once, with the backoff back at its start (grpc-java's resetConnectBackoff). */
    public synchronized void resetConnectBackoff() {
        lastFailure = null;
        if (backoff != null) {
            backoff.reset();
        }
    }

    /**
     * Opens one connection with {@code s} and completes {@code result} with it once HELLO is done. A connection this
     * client closed because its side of the upgrade failed after the server had moved is replaced, under the same
     * {@code result}, by one that does not offer the upgrade; one the transport closed because the server answered in
     * another protocol ({@link dev.rdmarpc.core.spi.ProtocolSwitchException}) by one in that protocol, at most
     * {@code protocolSwitches} times.
     */
    private void dial(InetSocketAddress address, CompletableFuture<ClientConnection> result, ConnectionSettings s,
                      int timeoutMillis) {
        dial(address, result, s, timeoutMillis, 1);
    }

    private void dial(InetSocketAddress address, CompletableFuture<ClientConnection> result, ConnectionSettings s,
                      int timeoutMillis, int protocolSwitches) {
        ClientConnection[] created = new ClientConnection[1];
        transport.connect(address, fc -> {
            ClientConnection cc = new ClientConnection(s, fc, authority, this);
            created[0] = cc;
            return cc;
        }, timeoutMillis).whenComplete((fc, error) -> {
            if (error != null) {
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
                result.completeExceptionally(Status.UNAVAILABLE
                        .withDescription("cannot connect to " + authority + ": " + describe(cause)).withCause(cause).asException());
                return;
            }
            ClientConnection cc = created[0];
            synchronized (this) {
                current = cc;
            }
            metrics.connectionOpened(fc.transportName());
            var timeout = RpcExecutors.timer().schedule(() -> {
                if (!cc.ready().isDone()) {
                    cc.close("no HELLO from " + authority + " within " + timeoutMillis + " ms (is it an rdmarpc server?)");
                }
            }, timeoutMillis, TimeUnit.MILLISECONDS);
            cc.ready().whenComplete((c, e) -> {
                timeout.cancel(false);
                if (e == null) {
                    startKeepAlive(cc);
                    result.complete(c);
                } else if (cc.upgradeFailedAfterServerMoved() && !s.upgraders().isEmpty()) {
                    redialWithoutUpgrade(address, result, s, timeoutMillis);
                } else if (cc.switchesProtocol() && protocolSwitches > 0) {
                    redial(address, result, s, timeoutMillis, protocolSwitches - 1);
                } else {
                    result.completeExceptionally(e);
                }
            });
            try {
                cc.start();
            } catch (RuntimeException e) {
                cc.close("failed to send HELLO: " + e);
            }
        });
    }

    private void redialWithoutUpgrade(InetSocketAddress address, CompletableFuture<ClientConnection> result, ConnectionSettings s,
                                      int timeoutMillis) {
        redial(address, result, s.withoutUpgraders(), timeoutMillis, 0);
    }

    private void redial(InetSocketAddress address, CompletableFuture<ClientConnection> result, ConnectionSettings s,
                        int timeoutMillis, int protocolSwitches) {
        try {
            dial(address, result, s, timeoutMillis, protocolSwitches);
        } catch (RuntimeException e) {
            result.completeExceptionally(Status.UNAVAILABLE.withDescription("cannot connect to " + authority + ": " + describe(e))
                    .withCause(e).asException());
        }
    }

    /** Watches a connection that finished HELLO when client keepalive is on: it closes one that stops answering. */
    private void startKeepAlive(ClientConnection cc) {
        if (keepAliveTimeNanos <= 0) {
            return;
        }
        KeepAlive k = new KeepAlive(cc, keepAliveTimeNanos, keepAliveTimeoutNanos, metrics);
        cc.keepAlive = k;
        k.start();
        if (cc.isClosed()) {
            k.stop(); // closed before the field was seen by connectionClosed
        }
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m;
    }

    /** Opens the connection now; completes when HELLO is done (or fails with UNAVAILABLE). */
    public CompletableFuture<Void> connect() {
        return connection().thenApply(c -> null);
    }

    /** Called once per connection when it closes, with why (UNAVAILABLE): {@code RpcConnection}'s close listener. */
    public void setConnectionClosedListener(java.util.function.Consumer<Status> listener) {
        this.closedListener = listener;
    }

    void connectionClosed(ClientConnection c, Status why) {
        KeepAlive k = c.keepAlive;
        if (k != null) {
            k.stop();
        }
        metrics.connectionClosed(c.out.transportName());
        if (c.upgradeFailedAfterServerMoved() || c.switchesProtocol()) {
            return; // never ready, and replaced at once (see dial): not a loss of the channel's connection
        }
        java.util.function.Consumer<Status> l = closedListener;
        if (l != null) {
            l.accept(why);
        }
    }

    public void shutdown() {
        boolean idle;
        synchronized (this) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            idle = activeCalls == 0;
        }
        if (idle) {
            terminate("channel shut down");
        }
    }

    public void shutdownNow() {
        synchronized (this) {
            shutdown = true;
        }
        terminate("channel shut down now");
    }

    private void terminate(String reason) {
        ClientConnection c;
        synchronized (this) {
            c = current;
            current = null;
        }
        if (c != null) {
            c.close(reason);
        }
        transport.close();
        terminated.countDown();
    }

    public boolean isShutdown() {
        synchronized (this) {
            return shutdown;
        }
    }

    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    /** The current connection's frame connection, or null (kept after it closes, until termination). */
    public synchronized FrameConnection currentConnection() {
        return current == null ? null : current.out;
    }
}
