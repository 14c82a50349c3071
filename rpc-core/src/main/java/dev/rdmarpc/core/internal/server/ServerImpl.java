package dev.rdmarpc.core.internal.server;

import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.internal.connection.Connection;
import dev.rdmarpc.core.internal.connection.ConnectionGuards;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.connection.Transports;
import dev.rdmarpc.core.internal.metrics.CallMetrics;
import dev.rdmarpc.core.internal.metrics.MicrometerCallMetrics;
import dev.rdmarpc.core.spi.ServerTransport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The server behind {@link dev.rdmarpc.core.RpcServer}: method registry, connections, shutdown. Internal: public
 * for RpcServer and the server calls.
 */
public final class ServerImpl {
    private final InetSocketAddress address;
    private final Map<String, ServerMethodDefinition<?, ?>> methods = new HashMap<>();
    private final ServerTransport transport;
    private final ConnectionSettings settings;
    private final Executor executor;
    private final CallMetrics metrics;
    private final long handshakeTimeoutMillis;
    private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private InetSocketAddress bound;
    private final List<ServiceDefinition> services;
    private boolean started;
    private volatile boolean shutdown;
    private volatile java.util.function.Function<String, ServerMethodDefinition<?, ?>> fallback;
    private volatile dev.rdmarpc.core.PeerConnectionListener connectionListener;
    private volatile ConnectionGuards guards = ConnectionGuards.DEFAULT;
    private volatile int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private volatile long memoryBudgetBytes = DEFAULT_MEMORY_BUDGET;
    private volatile int connectionWindow = DEFAULT_CONNECTION_WINDOW;
    /** Attachment bytes a method without its own limit accepts (-1: none); see {@link #attachmentLimit}. */
    private volatile int attachmentLimit = ServerMethodDefinition.SERVER_ATTACHMENT_LIMIT;
    private final java.util.concurrent.atomic.AtomicLong refusedConnections = new java.util.concurrent.atomic.AtomicLong();
    /** Set once the first client refused an upgrade for want of a certificate was logged at WARNING. */
    private final java.util.concurrent.atomic.AtomicBoolean unauthenticatedUpgradeLogged = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Connections a server keeps open at once by default: far above what one server process serves in practice, and
     * below the open-file limits servers run with, so a flood of connections is refused before the process runs out
     * of descriptors or per-connection buffers.
     */
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
    /**
     * Slab bytes in use above which a server refuses new calls by default: 1 GiB, room for hundreds of calls with
     * messages of the default 4 MiB limit, while a burst of large messages is refused well before the process runs
     * out of native memory.
     */
    public static final long DEFAULT_MEMORY_BUDGET = 1L << 30;
    /**
     * Bytes of messages one connection may hold on a server at once by default (its connection window, PROTOCOL.md
     * "Flow control"): 16 MiB, sixteen 1 MiB requests in flight on one connection, and what keeps one connection's
     * memory under the bound of PROTOCOL.md "Limits". Raised to what the largest accepted message needs.
     */
    public static final int DEFAULT_CONNECTION_WINDOW = 16 << 20;

    public ServerImpl(InetSocketAddress address, List<ServiceDefinition> services, ServerTransport transport,
                      ConnectionSettings settings, Executor executor, Object meterRegistry, long handshakeTimeoutMillis) {
        this.address = address;
        this.services = List.copyOf(services);
        for (ServiceDefinition s : services) {
            for (ServerMethodDefinition<?, ?> m : s.getMethods()) {
                if (methods.put(m.method().getFullMethodName(), m) != null) {
                    throw new IllegalArgumentException("method registered twice: " + m.method().getFullMethodName());
                }
            }
        }
        this.transport = transport;
        this.settings = settings;
        this.executor = executor;
        this.metrics = meterRegistry == null ? CallMetrics.NOOP : MicrometerCallMetrics.create(meterRegistry, "server", settings.pool(),
                Transports.upgraders());
        this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        setConnectionWindow(DEFAULT_CONNECTION_WINDOW);
    }

    public synchronized void start() throws IOException {
        if (started) {
            throw new IllegalStateException("server already started");
        }
        started = true;
        try {
            bound = transport.bind(address, fc -> {
                ServerConnection c = new ServerConnection(this, settings, fc);
                if (!admit(c)) {
                    return c;
                }
                if (shutdown) {
                    c.close("server is shutting down");
                }
                return c;
            });
        } catch (IOException e) {
            transport.close();
            terminated.countDown();
            throw e;
        }
    }

    /**
     * Counts an accepted connection against {@link #maxConnections}; over it, closes the connection at once (before
     * HELLO), logs and counts it, and returns false. Connections already open are not affected.
     */
    private boolean admit(ServerConnection c) {
        int max = maxConnections;
        synchronized (connections) {
            if (connections.size() < max) {
                connections.add(c);
                return true;
            }
        }
        c.refusedAtAccept = true;
        long refused = refusedConnections.incrementAndGet();
        metrics.limitRefused("connections");
        Connection.LOG.log(System.Logger.Level.WARNING, "refusing connection from {0}: the server has {1} connections open,"
                + " its limit (maxConnections); {2} refused so far", c.peer(), max, refused);
        c.close("the server has " + max + " connections open, its limit");
        return false;
    }

    /**
     * A client offered RDMA under TLS without a verified certificate: its connection stays on TLS over TCP. Counted;
     * logged at WARNING the first time (a configuration to fix: client auth REQUIRE, or certificates for the clients),
     * at DEBUG after that.
     */
    void upgradeRefusedWithoutClientCertificate(ServerConnection c) {
        metrics.upgradeRefused("no-client-certificate");
        boolean first = unauthenticatedUpgradeLogged.compareAndSet(false, true);
        Connection.LOG.log(first ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                "{0} offered RDMA under TLS without a verified client certificate: it stays on TLS over TCP"
                        + " (rdmaUnderTls AUTHENTICATE_ONLY upgrades only clients whose certificate the server verified){1}",
                c.peer(), first ? "; later ones are logged at DEBUG" : "");
    }

    /** Sets the server-wide limits: connections open at once, and slab bytes in use above which new calls are refused. */
    public void setLimits(int maxConnections, long memoryBudgetBytes) {
        this.maxConnections = maxConnections;
        this.memoryBudgetBytes = memoryBudgetBytes;
    }

    /**
     * Sets the connection window of connections accepted from now on; it is raised to what the largest message the
     * server accepts costs (its message limit, with the largest attachment it accepts), so that any message fits.
     */
    public void setConnectionWindow(int bytes) {
        long needed = 8L + settings.maxMessageSize() + Math.max(0, settings.maxAttachmentBytes());
        this.connectionWindow = (int) Math.min(Integer.MAX_VALUE, Math.max(bytes, needed));
    }

    /** The connection window of new connections. */
    int connectionWindow() {
        return connectionWindow;
    }

    /**
     * Whether a connection holding {@code held} bytes of messages (and queued responses) may take {@code more}: always
     * while the server's slab bytes in use are within the memory budget; over it, only while the connection stays
     * within its share, the budget divided among the open connections.
     */
    boolean withinShare(long held, long more) {
        long budget = memoryBudgetBytes;
        if (settings.pool().inUseBytes() <= budget) {
            return true;
        }
        return held + more <= budget / Math.max(1, connections.size());
    }

    /** Sets the attachment limit of methods that set none of their own (-1: they accept no attachments). */
    public void setAttachmentLimit(int maxBytes) {
        this.attachmentLimit = maxBytes;
    }

    /** What a request of {@code method} may carry as an attachment: its own limit, else the server's (-1: none). */
    public int attachmentLimit(ServerMethodDefinition<?, ?> method) {
        int own = method.maxAttachmentBytes();
        return own != ServerMethodDefinition.SERVER_ATTACHMENT_LIMIT ? own : attachmentLimit;
    }

    /** Slab bytes in use above which new calls are refused. */
    long memoryBudgetBytes() {
        return memoryBudgetBytes;
    }

    /** Connections closed at accept because the server had {@code maxConnections} open. */
    public long refusedConnections() {
        return refusedConnections.get();
    }

    public synchronized int port() {
        if (bound == null) {
            throw new IllegalStateException("server not started");
        }
        return bound.getPort();
    }

    ServerMethodDefinition<?, ?> lookup(String fullMethodName) {
        ServerMethodDefinition<?, ?> m = methods.get(fullMethodName);
        return m != null || fallback == null ? m : fallback.apply(fullMethodName);
    }

    /** The services added to the server's builder (interceptors applied). */
    public List<ServiceDefinition> services() {
        return services;
    }

    /** Methods not registered directly are looked up here (grpc-compat serves grpc services this way). */
    public void setFallback(java.util.function.Function<String, ServerMethodDefinition<?, ?>> lookup) {
        this.fallback = lookup;
    }

    public Executor executor() {
        return executor;
    }

    public CallMetrics metrics() {
        return metrics;
    }

    long handshakeTimeoutMillis() {
        return handshakeTimeoutMillis;
    }

    /** The control-frame budget and keepalive of connections accepted from now on. */
    public void setConnectionGuards(ConnectionGuards g) {
        this.guards = java.util.Objects.requireNonNull(g);
    }

    ConnectionGuards guards() {
        return guards;
    }

    /** Who is told of connections opening and closing; null for nobody. */
    public void setConnectionListener(dev.rdmarpc.core.PeerConnectionListener listener) {
        this.connectionListener = listener;
    }

    void connectionOpened(ServerConnection c) {
        tell("connectionOpened", l -> l.connectionOpened(c));
    }

    void pingReceived(ServerConnection c) {
        tell("pingReceived", l -> l.pingReceived(c));
    }

    void connectionClosed(ServerConnection c, boolean established, String reason) {
        connections.remove(c);
        if (c.refusedAtAccept) {
            return; // never counted, never told
        }
        if (established) {
            tell("connectionClosed", l -> l.connectionClosed(c, reason));
        }
        maybeTerminate();
    }

    /** Calls the connection listener, if any; what it throws is logged, not passed on to the connection. */
    private void tell(String event, java.util.function.Consumer<dev.rdmarpc.core.PeerConnectionListener> call) {
        dev.rdmarpc.core.PeerConnectionListener l = connectionListener;
        if (l != null) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                Connection.LOG.log(System.Logger.Level.WARNING, "PeerConnectionListener." + event + " threw", e);
            }
        }
    }

    private void maybeTerminate() {
        if (shutdown && connections.isEmpty() && terminated.getCount() > 0) {
            transport.close();
            terminated.countDown();
        }
    }

    /** Stops accepting and sends GOAWAY; calls in flight finish; connections close when idle. */
    public void shutdown() {
        synchronized (this) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            if (!started) {
                terminated.countDown();
                return;
            }
        }
        transport.stopAccepting();
        for (ServerConnection c : openConnections()) {
            c.goAway();
        }
        maybeTerminate();
    }

    /**
     * The connections open now, copied under the lock {@link #admit} takes, so that the copy is not taken in the middle
     * of an admission (one admitted after it sees {@link #shutdown} and is closed where it is accepted).
     */
    private List<ServerConnection> openConnections() {
        synchronized (connections) {
            return new ArrayList<>(connections);
        }
    }

    /** Cancels every call (handlers see cancellation, clients get UNAVAILABLE) and closes everything. */
    public void shutdownNow() {
        shutdown();
        for (ServerConnection c : openConnections()) {
            c.shutdownNow();
        }
        transport.close();
        synchronized (connections) {
            connections.clear();
        }
        terminated.countDown();
    }

    public boolean isShutdown() {
        return shutdown;
    }

    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    /** Number of open connections (for tests and metrics). */
    public int connectionCount() {
        return connections.size();
    }
}
