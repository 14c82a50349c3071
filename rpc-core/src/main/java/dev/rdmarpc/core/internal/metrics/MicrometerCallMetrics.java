package dev.rdmarpc.core.internal.metrics;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.ConnectionUpgrader;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link CallMetrics} on Micrometer, for one side ("server" or "client"); only loaded when the
 * user passes a registry. Meter names are listed in docs/METRICS.md.
 */
public final class MicrometerCallMetrics implements CallMetrics {
    private final MeterRegistry registry;
    private final String side;
    private final AtomicInteger activeCalls = new AtomicInteger();
    private final AtomicInteger activeConnections = new AtomicInteger();
    /** Per transport ("" for untagged calls), per method. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Counter>> started = new ConcurrentHashMap<>();
    /** Per transport ("" for untagged calls), per method and status. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Timer>> timers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> refusals = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> upgradeRefusals = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> opened = new ConcurrentHashMap<>();
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final Counter keepAlivePings;
    private final Counter keepAliveAcks;
    private final Counter closedByKeepAlive;
    private final Counter closedForControlFrames;

    private MicrometerCallMetrics(MeterRegistry registry, String side, SlabPool pool) {
        this.registry = registry;
        this.side = side;
        String p = "rdmarpc." + side;
        Gauge.builder(p + ".calls.active", activeCalls, AtomicInteger::get).description("Calls in progress").register(registry);
        Gauge.builder(p + ".connections.active", activeConnections, AtomicInteger::get).description("Open connections").register(registry);
        bytesIn = Counter.builder(p + ".bytes.received").baseUnit("bytes").description("Message bytes received").register(registry);
        bytesOut = Counter.builder(p + ".bytes.sent").baseUnit("bytes").description("Message bytes sent").register(registry);
        keepAlivePings = Counter.builder(p + ".keepalive.pings").description("Keepalive PINGs sent to silent connections").register(registry);
        keepAliveAcks = Counter.builder(p + ".keepalive.acks").description("Keepalive PINGs acknowledged").register(registry);
        closedByKeepAlive = Counter.builder(p + ".connections.closed").tags(Tags.of("reason", "keepalive"))
                .description("Connections closed by a guard, per reason").register(registry);
        closedForControlFrames = Counter.builder(p + ".connections.closed").tags(Tags.of("reason", "control-frames"))
                .description("Connections closed by a guard, per reason").register(registry);
        Gauge.builder("rdmarpc.slab.buffers.in_use", pool, SlabPool::inUseBuffers).description("Slab buffers handed out").register(registry);
        Gauge.builder("rdmarpc.slab.bytes.in_use", pool, SlabPool::inUseBytes).baseUnit("bytes").description("Bytes of slab buffers handed out").register(registry);
        Gauge.builder("rdmarpc.slab.bytes.reserved", pool, SlabPool::reservedBytes).baseUnit("bytes").description("Bytes of all slabs held").register(registry);
        Gauge.builder("rdmarpc.slab.bytes.free", pool, x -> x.reservedBytes() - x.inUseBytes()).baseUnit("bytes").description("Bytes of slabs held and not handed out").register(registry);
    }

    /**
     * Metrics on the given registry (typed Object so core loads without Micrometer); {@code upgraders} (the ones on the
     * class path) bind their own meters to it.
     */
    public static CallMetrics create(Object registry, String side, SlabPool pool, List<ConnectionUpgrader> upgraders) {
        if (registry == null) {
            return NOOP;
        }
        for (ConnectionUpgrader u : upgraders) {
            u.bindMeters(registry); // the RDMA transport's counters on the same registry
        }
        return new MicrometerCallMetrics((MeterRegistry) registry, side, pool);
    }

    @Override
    public void callStarted(String method, String transport) {
        activeCalls.incrementAndGet();
        started.computeIfAbsent(transport == null ? "" : transport, t -> new ConcurrentHashMap<>())
                .computeIfAbsent(method, m -> Counter.builder("rdmarpc." + side + ".calls.started")
                        .description("Calls started, per method (and transport, on a server)")
                        .tags(callTags(m, transport)).register(registry)).increment();
    }

    @Override
    public void callFinished(String method, String transport, String status, long nanos) {
        activeCalls.decrementAndGet();
        timers.computeIfAbsent(transport == null ? "" : transport, t -> new ConcurrentHashMap<>())
                .computeIfAbsent(method + '\0' + status, k -> Timer.builder("rdmarpc." + side + ".calls")
                        .description("Call latency, per method and status (and transport, on a server)")
                        .tags(callTags(method, transport).and("status", status))
                        .register(registry)).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A call's tags: its method, and the protocol of its connection where the side knows it. */
    private static Tags callTags(String method, String transport) {
        return transport == null ? Tags.of("method", method) : Tags.of("method", method, "transport", transport);
    }

    @Override
    public void connectionOpened(String transport) {
        activeConnections.incrementAndGet();
        opened.computeIfAbsent(String.valueOf(transport), t -> Counter.builder("rdmarpc." + side + ".connections.opened")
                .description("Connections opened, per transport and protocol (tcp, rdma, h2)").tags(Tags.of("transport", t))
                .register(registry)).increment();
    }

    @Override
    public void connectionClosed(String transport) {
        activeConnections.decrementAndGet();
    }

    @Override
    public void limitRefused(String limit) {
        refusals.computeIfAbsent(limit, l -> Counter.builder("rdmarpc." + side + ".limit.refusals")
                .description("Connections or streams refused by a limit, per limit").tags(Tags.of("limit", l))
                .register(registry)).increment();
    }

    @Override
    public void upgradeRefused(String reason) {
        upgradeRefusals.computeIfAbsent(reason, r -> Counter.builder("rdmarpc." + side + ".upgrades.refused")
                .description("Connections kept off RDMA, per reason").tags(Tags.of("reason", r))
                .register(registry)).increment();
    }

    @Override
    public void bytesReceived(int n) {
        bytesIn.increment(n);
    }

    @Override
    public void bytesSent(int n) {
        bytesOut.increment(n);
    }

    @Override
    public void keepAlivePingSent() {
        keepAlivePings.increment();
    }

    @Override
    public void keepAlivePingAcknowledged() {
        keepAliveAcks.increment();
    }

    @Override
    public void connectionClosedByKeepAlive() {
        closedByKeepAlive.increment();
    }

    @Override
    public void connectionClosedForControlFrames() {
        closedForControlFrames.increment();
    }
}
