package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.RdmaDeviceChoice;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The process's device contexts, one per RDMA device and port, each opened on the first connection that needs it,
 * shared by every connection on it, and closed once no connection has used it for a while ({@link #idle}; a fatal
 * device error retires it at once, and the next connection opens the device again); and the choice, per connection, of the context and GID: an explicit
 * {@link RdmaDeviceChoice} (a channel's or server's builder, else the {@code rdmarpc.rdma.*} system properties), else
 * the device whose GID table maps the connection's local address ({@link GidTable}), else the default context (the
 * first device with an active port, the best-scored GID: loopback connections and InfiniBand ports land there).
 */
final class DeviceContexts {
    /** A failed open is retried after this long (a port may come up, a device may appear). */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final String DEFAULT = "default";
    private static final Object LOCK = new Object();
    private static final Map<String, RdmaDeviceContext> OPEN = new ConcurrentHashMap<>();
    private static final Map<String, Failure> FAILED = new ConcurrentHashMap<>();
    /** How long a local address's GID lookup is reused (it reads sysfs: a few hundred small files). */
    private static final long LOOKUP_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final Map<Lookup, Found> LOOKUPS = new ConcurrentHashMap<>();
    private static volatile RdmaConfig config;
    /** How long a context no connection uses stays open (connections often come again soon); read at each close. */
    static final String LINGER_PROPERTY = "rdmarpc.rdma.contextLingerMillis";
    private static final long DEFAULT_LINGER_MILLIS = 10_000;
    /** Closes unused contexts (never the poller thread, which a close joins). */
    private static ScheduledExecutorService closer;

    /** The context and GID one connection uses. */
    record ConnectionPath(RdmaDeviceContext context, int gidIndex, Gid gid) {
    }

    private record Failure(DeviceSelector.Unavailable reason, long atNanos, boolean permanent) {
    }

    private record Lookup(InetAddress address, int port) {
    }

    private record Found(Optional<GidTable.Match> match, long atNanos) {
    }

    private DeviceContexts() {
    }

    /** The settings from system properties, read once. */
    static RdmaConfig config() {
        RdmaConfig c = config;
        if (c == null) {
            synchronized (LOCK) {
                if (config == null) {
                    config = RdmaConfig.fromSystemProperties();
                }
                c = config;
            }
        }
        return c;
    }

    /** The context and GID for a connection whose local address is {@code local}. */
    static ConnectionPath forConnection(RdmaDeviceChoice choice, SocketAddress local) throws DeviceSelector.Unavailable {
        RdmaConfig base = config();
        String device = choice != null && choice.device() != null ? choice.device() : base.device();
        int port = choice != null && choice.port() > 0 ? choice.port() : base.port();
        int gidIndex = choice != null && choice.gidIndex() >= 0 ? choice.gidIndex() : base.gidIndex();
        InetAddress ip = PeerFallbacks.hostOf(local);
        if (gidIndex < 0 && ip != null && !ip.isLoopbackAddress() && !ip.isAnyLocalAddress()) {
            Optional<GidTable.Match> m = gidOf(ip, port);
            if (m.isPresent() && (device == null || device.equals(m.get().device()))) {
                device = m.get().device();
                port = m.get().port();
                gidIndex = m.get().gidIndex();
            }
        }
        RdmaDeviceContext context = device == null ? defaultContext() : context(device, port);
        if (gidIndex < 0 || gidIndex == context.gidIndex()) {
            return new ConnectionPath(context, context.gidIndex(), context.gid());
        }
        Gid gid;
        try {
            gid = context.queryGid(gidIndex);
        } catch (VerbsException e) {
            throw new DeviceSelector.Unavailable(Fallbacks.NO_DEVICE, "GID index " + gidIndex + " of "
                    + context.deviceName() + " port " + context.port() + ": " + e.getMessage());
        }
        if (context.portAttributes().isEthernet() && gid.isZero()) {
            throw new DeviceSelector.Unavailable(Fallbacks.NO_DEVICE, "GID index " + gidIndex + " of "
                    + context.deviceName() + " port " + context.port() + " is empty");
        }
        return new ConnectionPath(context, gidIndex, gid);
    }

    /** The default context (the first device with an active port), opened now if it is not. */
    static RdmaDeviceContext defaultContext() throws DeviceSelector.Unavailable {
        return open(DEFAULT, config());
    }

    /** The default context if it is open, else null (tests). */
    static RdmaDeviceContext defaultIfOpen() {
        return OPEN.get(DEFAULT);
    }

    /** The context of {@code device} and {@code port} (0: its first active port), opened now if it is not. */
    static RdmaDeviceContext context(String device, int port) throws DeviceSelector.Unavailable {
        RdmaConfig c = config();
        return open(device + "/" + port, new RdmaConfig(device, port, c.gidIndex(), c.receiveBufferSize(), c.srqDepth(),
                c.credits(), c.sendQueueDepth(), c.maxInline(), c.spinMicros(), c.rendezvous(), c.maxConnections(),
                c.minRnrTimer(), c.ackTimeout(), c.retryCount()));
    }

    /** Every open context, once each. */
    static List<RdmaDeviceContext> all() {
        List<RdmaDeviceContext> all = new ArrayList<>();
        for (RdmaDeviceContext c : OPEN.values()) {
            if (!all.contains(c)) {
                all.add(c);
            }
        }
        return all;
    }

    /**
     * The open context for {@code key}, else a new one. A context the closer has begun to close is still in {@link #OPEN}
     * until its close ends; taking {@link #LOCK}, which the closer holds from its check to the removal, waits for that
     * and then opens the device again, so a connection that arrives during a close never gets a closed context twice.
     */
    private static RdmaDeviceContext open(String key, RdmaConfig settings) throws DeviceSelector.Unavailable {
        RdmaDeviceContext c = OPEN.get(key);
        if (c != null && !c.isClosed()) {
            return c;
        }
        synchronized (LOCK) {
            c = OPEN.get(key);
            if (c != null) {
                return c; // under the lock no closed context is in OPEN
            }
            Failure f = FAILED.get(key);
            if (f != null && (f.permanent() || System.nanoTime() - f.atNanos() < RETRY_NANOS)) {
                throw f.reason();
            }
            DeviceSelector.Selection s;
            try {
                s = DeviceSelector.select(settings);
            } catch (DeviceSelector.Unavailable e) {
                FAILED.put(key, new Failure(e, System.nanoTime(), DEFAULT.equals(key) && OPEN.isEmpty()));
                throw e;
            }
            String deviceKey = s.context().deviceName() + "/" + s.port();
            c = OPEN.get(deviceKey);
            if (c != null) {
                s.context().close(); // that device is open already: one context per device and port
            } else {
                try {
                    c = RdmaDeviceContext.open(settings, s);
                } catch (DeviceSelector.Unavailable e) {
                    FAILED.put(key, new Failure(e, System.nanoTime(), DEFAULT.equals(key)));
                    throw e;
                } catch (RuntimeException e) {
                    DeviceSelector.Unavailable u = new DeviceSelector.Unavailable(Fallbacks.NO_DEVICE,
                            "opening the RDMA device failed: " + e);
                    FAILED.put(key, new Failure(u, System.nanoTime(), DEFAULT.equals(key)));
                    throw u;
                }
                OPEN.put(deviceKey, c);
                RdmaMetrics.DEVICE_CONTEXTS.incrementAndGet();
            }
            OPEN.put(key, c);
            FAILED.remove(key);
            return c;
        }
    }

    /**
     * The context's last queue pair is gone: closes it after {@link #LINGER_PROPERTY} milliseconds (default 10 s) if no
     * connection took it again meanwhile, nor a test pinned it.
     */
    static void idle(RdmaDeviceContext c) {
        long linger = Math.max(0, Long.getLong(LINGER_PROPERTY, DEFAULT_LINGER_MILLIS));
        closer().schedule(() -> closeIfUnused(c), c.isRetired() ? 0 : linger, TimeUnit.MILLISECONDS);
    }

    /** A fatal device error: new connections no longer get {@code c} (they open the device again); it closes once unused. */
    static void retire(RdmaDeviceContext c) {
        synchronized (LOCK) {
            OPEN.values().removeIf(open -> open == c);
        }
        closer().execute(() -> closeIfUnused(c));
    }

    /** Closes now, on the closer thread, every open context that nothing uses or pins (tests). */
    static void closeUnused() {
        for (RdmaDeviceContext c : all()) {
            closer().execute(() -> closeIfUnused(c));
        }
    }

    private static void closeIfUnused(RdmaDeviceContext c) {
        synchronized (LOCK) {
            if (c.closeIfUnused()) {
                OPEN.values().removeIf(open -> open == c);
                RdmaMetrics.DEVICE_CONTEXTS.decrementAndGet();
            }
        }
    }

    private static ScheduledExecutorService closer() {
        synchronized (LOCK) {
            if (closer == null) {
                ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "rdmarpc-rdma-context-closer");
                    t.setDaemon(true);
                    return t;
                });
                e.setRemoveOnCancelPolicy(true);
                closer = e;
            }
            return closer;
        }
    }

    /** The device, port and GID of a local address, looked up again after {@link #LOOKUP_NANOS}. */
    private static Optional<GidTable.Match> gidOf(InetAddress ip, int port) {
        Lookup key = new Lookup(ip, port);
        long now = System.nanoTime();
        Found f = LOOKUPS.get(key);
        if (f == null || now - f.atNanos() > LOOKUP_NANOS) {
            if (LOOKUPS.size() > 1024) {
                LOOKUPS.clear();
            }
            f = new Found(GidTable.find(GidTable.SYSFS, ip, netdevOf(ip), port), now);
            LOOKUPS.put(key, f);
        }
        return f.match();
    }

    /** The interface holding {@code ip}, or null when none does. */
    private static String netdevOf(InetAddress ip) {
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(ip);
            return nif == null ? null : nif.getName();
        } catch (SocketException e) {
            return null;
        }
    }
}
