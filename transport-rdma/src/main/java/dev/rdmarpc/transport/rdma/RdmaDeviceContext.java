package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.CompletionChannel;
import dev.rdmarpc.transport.rdma.verbs.CompletionQueue;
import dev.rdmarpc.transport.rdma.verbs.DeviceAttributes;
import dev.rdmarpc.transport.rdma.verbs.Errno;
import dev.rdmarpc.transport.rdma.verbs.Gid;
import dev.rdmarpc.transport.rdma.verbs.IbvContext;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.OdpCapabilities;
import dev.rdmarpc.transport.rdma.verbs.PortAttributes;
import dev.rdmarpc.transport.rdma.verbs.ProtectionDomain;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.QueuePairConfig;
import dev.rdmarpc.transport.rdma.verbs.SharedReceiveQueue;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Everything the RDMA transport keeps per device, once per process: the open device, one protection domain, one
 * completion channel and CQ shared by every queue pair, one SRQ kept full of slab buffers, the slab registrations,
 * the poller and async-event threads, and the endpoint tables the poller dispatches by. One per device and port, opened
 * on the first connection that needs it ({@link DeviceContexts}). When its port goes down or the device fails, its
 * connections are closed and new ones stay on TCP until the port is active again.
 */
final class RdmaDeviceContext {
    /** {@code vendor_id} of Soft-RoCE (rxe) devices. */
    static final int SOFT_ROCE_VENDOR_ID = 0xFFFFFF;

    private final RdmaConfig config;
    private final IbvContext device;
    private final int port;
    private volatile PortAttributes portAttributes;
    /** Why new connections must not use this context (its port is down, the device failed); null while usable. */
    private volatile String unusable;
    private volatile boolean deviceFailed;
    private final int gidIndex;
    private final Gid gid;
    private final DeviceAttributes attributes;
    private final RdmaMetrics.DeviceCounters counters;
    private final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private ProtectionDomain pd;
    private CompletionChannel channel;
    /**
     * The context's CQs, on one completion channel and one poller: as many as the device needs for
     * {@code maxConnections} queue pairs (one where its {@code max_cqe} is large enough; Soft-RoCE's 32,767 holds 123
     * queue pairs of the default send-queue depth). Each queue pair sends and receives on one of them.
     */
    private CompletionQueue[] cqs;
    /** Queue pairs on each CQ of {@link #cqs}; guarded by itself. */
    private int[] cqLoad;
    /** Queue pairs one CQ has room for. */
    private int queuePairsPerCq;
    private SharedReceiveQueue srq;
    private MemoryRegistry registry;
    /** Registrations of application memory (attachments), shared by every connection of this protection domain. */
    private RegistrationCache<MemoryRegion> attachmentRegistrations;
    private ReceiveQueue receives;
    private CompletionPoller poller;
    private AsyncEventLoop events;
    private boolean windows;
    private OdpCapabilities odp = OdpCapabilities.NONE;
    private boolean attachmentsOnDemand;
    private int responderDepth;
    private int initiatorDepth;
    private int readChunk;
    private int maxEndpoints;
    private volatile int grantedInline = -1;
    /**
     * Queue pairs alive on this context (offered, connected or being torn down): the context's users. Set to
     * {@link #CLOSED} (far below zero) when the context closes, so no reservation succeeds after that.
     */
    private final AtomicInteger reserved = new AtomicInteger();
    private static final int CLOSED = Integer.MIN_VALUE / 2;
    /** Holders other than connections (tests) that keep the context open while it has no queue pair. */
    private final AtomicInteger pins = new AtomicInteger();
    /** After a fatal device error: no longer handed to new connections; closes once its last queue pair is gone. */
    private volatile boolean retired;
    private final AtomicInteger endpointIds = new AtomicInteger();
    private final IntMap<RdmaEndpoint> byQpn = new IntMap<>();
    private final IntMap<RdmaEndpoint> byId = new IntMap<>();

    /** The default device context (see {@link DeviceContexts#defaultContext()}), opened on first use. */
    static RdmaDeviceContext shared() throws DeviceSelector.Unavailable {
        return DeviceContexts.defaultContext();
    }

    /** The default context if it is open, else null (tests). */
    static RdmaDeviceContext sharedIfOpen() {
        return DeviceContexts.defaultIfOpen();
    }

    private RdmaDeviceContext(RdmaConfig config, DeviceSelector.Selection s) {
        this.config = config;
        this.device = s.context();
        this.port = s.port();
        this.portAttributes = s.portAttributes();
        this.gidIndex = s.gidIndex();
        this.gid = s.gid();
        this.attributes = device.queryDevice();
        this.counters = RdmaMetrics.device(device.deviceName(), port);
    }

    /** Opens the context on an already selected device; on failure the selection's device is closed. */
    static RdmaDeviceContext open(RdmaConfig config, DeviceSelector.Selection s) throws DeviceSelector.Unavailable {
        RdmaDeviceContext c = new RdmaDeviceContext(config, s);
        try {
            c.start();
        } catch (DeviceSelector.Unavailable | RuntimeException e) {
            c.closeQuietly();
            throw e;
        }
        return c;
    }

    private void start() throws DeviceSelector.Unavailable {
        DeviceAttributes a = attributes;
        windows = switch (config.rendezvous()) {
            case "region" -> false;
            case "window" -> {
                if (!a.supportsMemoryWindowType2()) {
                    Fallbacks.LOG.log(Level.WARNING, "rdmarpc.rdma.rendezvous=window, but {0} has no type-2 memory "
                            + "windows; using a memory region per rendezvous", device.deviceName());
                }
                yield a.supportsMemoryWindowType2();
            }
            default -> a.supportsMemoryWindowType2();
        };
        try {
            odp = device.queryOdpCapabilities();
        } catch (RuntimeException e) {
            Fallbacks.LOG.log(Level.DEBUG, "ibv_query_device_ex on {0}: {1}", device.deviceName(), e.toString());
        }
        attachmentsOnDemand = RegistrationCache.useOnDemandPaging(
                System.getProperty(RegistrationCache.ON_DEMAND_PAGING_PROPERTY), odp);
        responderDepth = Math.max(1, Math.min(16, a.maxQpRdAtom()));
        initiatorDepth = Math.max(1, Math.min(16, a.maxQpInitRdAtom()));
        readChunk = (int) Math.min(1L << 30, Math.max(4096, portAttributes.maxMessageSize()));
        int sqDepth = config.sendQueueDepth();
        if (sqDepth > a.maxQpWr()) {
            throw new IllegalStateException("rdmarpc.rdma.sendQueueDepth " + sqDepth + " exceeds the device's max_qp_wr "
                    + a.maxQpWr());
        }
        int srqDepth = Math.min(config.srqDepth(), a.maxSrqWr());
        // a CQ holds every receive completion of the SRQ (they land on the CQ of the queue pair that took the buffer)
        // and, per queue pair on it, a whole send queue's completions and its drain marker
        int perQp = sqDepth + 1;
        int fits = Math.max(1, (a.maxCqe() - srqDepth - 64) / perQp);
        int cqCount = Math.max(1, Math.min(a.maxCq() > 1 ? a.maxCq() - 1 : 1,
                Math.ceilDiv(config.maxConnections(), fits)));
        queuePairsPerCq = Math.min(fits, Math.ceilDiv(config.maxConnections(), cqCount));
        int cqe = (int) Math.min(a.maxCqe(), (long) srqDepth + (long) queuePairsPerCq * perQp + 64);
        maxEndpoints = Math.min(config.maxConnections(), cqCount * queuePairsPerCq);

        pd = track(device.allocProtectionDomain());
        channel = track(device.createCompletionChannel());
        cqs = new CompletionQueue[cqCount];
        cqLoad = new int[cqCount];
        for (int i = 0; i < cqCount; i++) {
            cqs[i] = track(device.createCompletionQueue(cqe, channel, 0));
        }
        srq = track(pd.createSharedReceiveQueue(srqDepth, 1));
        int access = AccessFlags.LOCAL_WRITE | (windows ? AccessFlags.MW_BIND : 0);
        registry = new MemoryRegistry(pd, access);
        attachmentRegistrations = RendezvousGrants.newCache(pd, attachmentsOnDemand);
        registry.addPool(SlabPool.shared());
        receives = new ReceiveQueue(srq, SlabPool.shared(), config.receiveBufferSize(), srqDepth, arena, registry.device());
        receives.fill();
        if (registry.lastFailure() != null || receives.posted() == 0) {
            throw new DeviceSelector.Unavailable(Fallbacks.MEMLOCK, "memory registration failed: "
                    + (registry.lastFailure() != null ? registry.lastFailure() : "no receive could be posted"));
        }
        receives.armLimit();
        RdmaMetrics.resetLowWaterMark();
        poller = new CompletionPoller(this, cqs, channel, receives, arena, config.spinMicros());
        events = new AsyncEventLoop(this, device);
        poller.start();
        events.start();
        counters.open.set(1);
        counters.opened.increment();
        Fallbacks.LOG.log(Level.INFO, "RDMA transport on {0} port {1} ({2}, GID[{3}] {4}, MTU {5}): SRQ {6} x {7} B, "
                        + "{8} credits, inline {9}, rendezvous by {10}, {11} µs spin; on-demand paging: {12}, attachments {13}; "
                        + "{14} queue pairs on {15} CQ(s) of {16} entries",
                device.deviceName(), port,
                portAttributes.isEthernet() ? "RoCE" : "InfiniBand", gidIndex, gid,
                PortAttributes.mtuBytes(portAttributes.activeMtu()), srqDepth, config.receiveBufferSize(),
                credits(), config.maxInline(), windows ? "memory windows" : "memory regions", config.spinMicros(), odp,
                attachmentsOnDemand ? "registered on demand" : "pinned", maxEndpoints, cqs.length, cqe);
    }

    private <T extends AutoCloseable> T track(T resource) {
        opened.add(resource);
        return resource;
    }

    private void closeQuietly() {
        if (poller != null) {
            poller.stop();
        }
        if (events != null) {
            events.stop();
        }
        for (int i = opened.size() - 1; i >= 0; i--) {
            AutoCloseable r = opened.get(i);
            try {
                if (r == srq && registry != null) {
                    srq.close();
                    receives.releaseAll();
                    continue;
                }
                if (r == pd && registry != null) {
                    attachmentRegistrations.clear(); // no queue pair is left to hold one
                    registry.close(); // every slab region, before the protection domain they belong to
                }
                r.close();
            } catch (Exception e) {
                Fallbacks.LOG.log(Level.DEBUG, "closing " + r + ": " + e);
            }
        }
        device.close();
        arena.close();
    }

    // ------------------------------------------------------------------ what connections use

    RdmaConfig config() {
        return config;
    }

    String deviceName() {
        return device.deviceName();
    }

    int port() {
        return port;
    }

    int gidIndex() {
        return gidIndex;
    }

    Gid gid() {
        return gid;
    }

    /** The GID at {@code index} of this context's port. */
    Gid queryGid(int index) {
        return device.queryGid(port, index);
    }

    /** Whether new connections may use this context (null), or why not. */
    String unusableReason() {
        return unusable;
    }

    /**
     * Async events: the port went down or the device failed. New connections stay on TCP (after a device fault, the
     * next one that needs the device opens it anew), and every connection on this context is closed (its calls fail
     * with UNAVAILABLE). A retired context hears nothing more: a device reports one fault many times (an overrun CQ
     * once per completion it could not take), and its connections are closed already.
     */
    void fail(String event, boolean device) {
        if (retired) {
            return;
        }
        RdmaMetrics.DEVICE_FAULTS.increment();
        if (device) {
            deviceFailed = true;
            retired = true;
            DeviceContexts.retire(this); // the next connection that needs the device opens it again
        }
        String why = deviceName() + " port " + port + ": " + event;
        unusable = why;
        Fallbacks.LOG.log(Level.WARNING, "RDMA {0}: closing its connections; {1}", why,
                device ? "the next connection that needs the device opens it again"
                        : "new ones stay on TCP until the port is active again");
        for (RdmaEndpoint ep : endpoints()) {
            ep.closeOnError(new IllegalStateException("RDMA " + why));
        }
    }

    /** Async event: the port is active again; new connections may use RDMA (a failed device is opened anew instead). */
    void portActive() {
        if (deviceFailed || unusable == null) {
            return;
        }
        try {
            portAttributes = device.queryPort(port);
        } catch (RuntimeException e) {
            Fallbacks.LOG.log(Level.WARNING, "RDMA {0} port {1}: querying the port after IBV_EVENT_PORT_ACTIVE failed: {2}",
                    deviceName(), port, e.toString());
            return;
        }
        unusable = null;
        Fallbacks.LOG.log(Level.INFO, "RDMA {0} port {1} is active again: new connections may use RDMA", deviceName(), port);
    }

    PortAttributes portAttributes() {
        return portAttributes;
    }

    /**
     * Whether a BIND_MW or LOCAL_INV may only be posted on an empty send queue. Soft-RoCE (rxe, vendor id 0xFFFFFF)
     * replays the local work requests still in its send queue when it retries after an RNR NAK or an ACK timeout:
     * a replayed bind meets a window that is already bound and fails ({@code IBV_WC_MW_BIND_ERR}), or leaves the
     * queue pair stuck. A local work request posted when every earlier one has completed is retired before any
     * later retry can rewind to it.
     */
    boolean localOpsNeedEmptySendQueue() {
        return attributes.vendorId() == SOFT_ROCE_VENDOR_ID;
    }

    /** What the device reports of on-demand paging ({@code ibv_query_device_ex}). */
    OdpCapabilities odpCapabilities() {
        return odp;
    }

    /** Whether connections register attachment memory on demand (ODP) instead of pinning it. */
    boolean attachmentsOnDemand() {
        return attachmentsOnDemand;
    }

    boolean useWindows() {
        return windows;
    }

    int responderDepth() {
        return responderDepth;
    }

    int initiatorDepth() {
        return initiatorDepth;
    }

    int readChunk() {
        return readChunk;
    }

    int credits() {
        return Math.min(config.credits(), Math.max(2, receives.depth()));
    }

    int receiveBufferSize() {
        return config.receiveBufferSize();
    }

    CompletionPoller poller() {
        return poller;
    }

    MemoryRegistry registry() {
        return registry;
    }

    /** The cache of attachment registrations every connection of this context shares. */
    RegistrationCache<MemoryRegion> attachmentRegistrations() {
        return attachmentRegistrations;
    }

    int maxEndpoints() {
        return maxEndpoints;
    }

    /** Reserves room on the CQs for one more queue pair; false when the context is full or closed. */
    boolean tryReserve() {
        int n = reserved.incrementAndGet();
        if (n <= 0 || n > maxEndpoints) {
            reserved.decrementAndGet();
            return false;
        }
        return true;
    }

    /** A reservation that got no queue pair is given back; the last one lets the context close ({@link DeviceContexts}). */
    void unreserve() {
        if (reserved.decrementAndGet() == 0) {
            DeviceContexts.idle(this);
        }
    }

    /** A queue pair and everything it held are gone: its CQ has room again, and its reservation is given back. */
    void unreserve(QueuePair qp) {
        releaseCq(qp.config().sendCq());
        unreserve();
    }

    /** The CQ with the fewest queue pairs, counted for one more (the reservation guarantees it has room). */
    private CompletionQueue takeCq() {
        synchronized (cqLoad) {
            int best = 0;
            for (int i = 1; i < cqLoad.length; i++) {
                if (cqLoad[i] < cqLoad[best]) {
                    best = i;
                }
            }
            cqLoad[best]++;
            return cqs[best];
        }
    }

    private void releaseCq(CompletionQueue cq) {
        synchronized (cqLoad) {
            for (int i = 0; i < cqs.length; i++) {
                if (cqs[i] == cq) {
                    cqLoad[i]--;
                    return;
                }
            }
        }
    }

    /** The CQs queue pairs are spread over, and how many each has room for (tests, the scale harness). */
    int completionQueues() {
        return cqs.length;
    }

    int queuePairsPerCq() {
        return queuePairsPerCq;
    }

    /** Whether the context has closed (a connection that reserved nothing yet must open it again). */
    boolean isClosed() {
        return reserved.get() < 0;
    }

    /** Keeps the context open while no connection uses it (tests that hold on to it across connections). */
    void pin() {
        pins.incrementAndGet();
    }

    /** Whether a fatal device error retired the context. */
    boolean isRetired() {
        return retired;
    }

    /**
     * Closes the context if nothing uses it: no queue pair, and no pin unless it is retired. Threads and verbs
     * resources go, every slab region is deregistered. Never on the poller thread (it is joined). Returns whether it
     * closed.
     */
    boolean closeIfUnused() {
        if ((pins.get() > 0 && !retired) || !reserved.compareAndSet(0, CLOSED)) {
            return false;
        }
        closeQuietly();
        counters.open.set(0);
        Fallbacks.LOG.log(Level.INFO, "RDMA device context {0} port {1} closed: no connection uses it", deviceName(), port);
        return true;
    }

    /** Queue pairs alive on this context: offered, connected or being torn down (tests check it returns to 0). */
    int queuePairs() {
        return reserved.get();
    }

    /** A new RC queue pair on the least used CQ and the shared SRQ, in INIT (peers may RDMA-READ through it). */
    QueuePair createQueuePair() {
        int inline = grantedInline >= 0 ? grantedInline : config.maxInline();
        CompletionQueue cq = takeCq();
        QueuePair qp;
        while (true) {
            try {
                qp = pd.createQueuePair(QueuePairConfig.rc(cq, srq, config.sendQueueDepth(), 2, inline));
                break;
            } catch (VerbsException e) {
                if (e.errno() != Errno.EINVAL || inline == 0) {
                    releaseCq(cq);
                    throw e;
                }
                inline = inline > 64 ? 64 : 0; // the device refused that much inline data: ask for less
            } catch (RuntimeException e) {
                releaseCq(cq);
                throw e;
            }
        }
        grantedInline = qp.caps().maxInlineData();
        try {
            qp.toInit(port, AccessFlags.REMOTE_READ);
        } catch (RuntimeException e) {
            qp.close();
            releaseCq(cq);
            throw e;
        }
        return qp;
    }

    int nextEndpointId() {
        int id;
        do {
            id = endpointIds.incrementAndGet() & 0x7fffffff;
        } while (id == 0);
        return id;
    }

    void register(RdmaEndpoint ep) {
        byId.put(ep.id, ep);
        byQpn.put(ep.qp.qpNum(), ep);
        RdmaMetrics.CONNECTIONS.incrementAndGet();
        counters.connections.incrementAndGet();
    }

    /** A registered endpoint is gone (or never connected). */
    void connectionClosed() {
        RdmaMetrics.CONNECTIONS.decrementAndGet();
        counters.connections.decrementAndGet();
    }

    /** This device and port's counters in {@link RdmaMetrics}. */
    RdmaMetrics.DeviceCounters counters() {
        return counters;
    }

    /** Removes a torn-down endpoint from dispatch; its CQ room is freed by {@link #unreserve} once its QP is gone. */
    void unregister(RdmaEndpoint ep) {
        byQpn.remove(ep.qp.qpNum(), ep);
        byId.remove(ep.id, ep);
    }

    RdmaEndpoint endpointByQpn(int qpn) {
        return byQpn.get(qpn);
    }

    RdmaEndpoint endpointById(int id) {
        return byId.get(id);
    }

    RdmaEndpoint endpointByQpAddress(long address) {
        for (RdmaEndpoint ep : byId.values()) {
            if (ep.qp.address() == address) {
                return ep;
            }
        }
        return null;
    }

    /** Open endpoints (tests). */
    List<RdmaEndpoint> endpoints() {
        return byId.values();
    }

    /** Poller: refills the SRQ after its limit event and re-arms the limit. */
    void refillReceives() {
        receives.fill();
        receives.armLimit();
    }

    /** The SRQ's receive queue (poller thread only). */
    ReceiveQueue receiveQueue() {
        return receives;
    }

    int postedReceives() {
        return receives.posted();
    }

    int srqDepth() {
        return receives.depth();
    }
}
