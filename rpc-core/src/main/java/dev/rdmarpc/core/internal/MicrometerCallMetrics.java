package dev.rdmarpc.core.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** {@link CallMetrics} on Micrometer; only loaded when the user passes a registry. */
final class MicrometerCallMetrics implements CallMetrics {
    private final MeterRegistry registry;
    private final AtomicInteger activeCalls = new AtomicInteger();
    private final AtomicInteger activeConnections = new AtomicInteger();
    private final ConcurrentHashMap<String, Counter> started = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

    private MicrometerCallMetrics(MeterRegistry registry) {
        this.registry = registry;
        registry.gauge("rdmarpc.server.calls.active", activeCalls);
        registry.gauge("rdmarpc.server.connections.active", activeConnections);
    }

    /** Metrics on the given registry (typed Object so core loads without Micrometer). */
    static CallMetrics create(Object registry) {
        return registry == null ? NOOP : new MicrometerCallMetrics((MeterRegistry) registry);
    }

    @Override
    public void callStarted(String method) {
        activeCalls.incrementAndGet();
        started.computeIfAbsent(method, m -> Counter.builder("rdmarpc.server.calls.started")
                .description("Calls started, per method").tags(Tags.of("method", m)).register(registry)).increment();
    }

    @Override
    public void callFinished(String method, String status, long nanos) {
        activeCalls.decrementAndGet();
        timers.computeIfAbsent(method + '\0' + status, k -> Timer.builder("rdmarpc.server.calls")
                .description("Call latency, per method and status").tags(Tags.of("method", method, "status", status))
                .register(registry)).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void connectionOpened(String transport) {
        activeConnections.incrementAndGet();
    }

    @Override
    public void connectionClosed(String transport) {
        activeConnections.decrementAndGet();
    }
}
