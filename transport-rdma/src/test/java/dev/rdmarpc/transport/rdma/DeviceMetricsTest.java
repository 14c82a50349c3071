package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * Per-device counters: kept per device and port in {@link RdmaMetrics.Snapshot#devices()}, subtracted by
 * {@code minus} (gauges kept), and published on Micrometer with {@code device} and {@code port} tags, for devices seen
 * before and after the registry was bound.
 */
class DeviceMetricsTest {
    @Test
    void aDevicesCountersAppearInTheSnapshotAndMinusSubtractsCountersOnly() {
        RdmaMetrics.DeviceCounters c = RdmaMetrics.device("snapshotdev", 1);
        assertSame(c, RdmaMetrics.device("snapshotdev", 1), "one set of counters per device and port");
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        c.open.set(1);
        c.opened.increment();
        c.connections.addAndGet(2);
        c.upgrades.add(3);
        c.completionErrors.increment();
        RdmaMetrics.DeviceSnapshot now = RdmaMetrics.snapshot().devices().get("snapshotdev/1");
        assertNotNull(now);
        assertTrue(now.open());
        assertEquals(2, now.connections());
        RdmaMetrics.DeviceSnapshot d = RdmaMetrics.snapshot().minus(before).devices().get("snapshotdev/1");
        assertEquals(new RdmaMetrics.DeviceSnapshot("snapshotdev", 1, true, 1, 2, 3, 1), d);
        c.connections.addAndGet(-2);
        c.open.set(0);
        assertFalse(RdmaMetrics.snapshot().devices().get("snapshotdev/1").open());
    }

    @Test
    void devicesArePublishedWithDeviceAndPortTagsBeforeAndAfterBinding() {
        RdmaMetrics.DeviceCounters early = RdmaMetrics.device("earlydev", 1);
        early.upgrades.add(5);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RdmaMetrics.bindTo(registry);
        RdmaMetrics.bindTo(registry); // idempotent
        assertEquals(5.0, registry.find("rdmarpc.rdma.device.upgrades").tag("device", "earlydev").tag("port", "1")
                .functionCounter().count());
        RdmaMetrics.DeviceCounters late = RdmaMetrics.device("latedev", 2);
        late.connections.set(4);
        late.open.set(1);
        assertEquals(4.0, registry.find("rdmarpc.rdma.device.connections").tag("device", "latedev").tag("port", "2")
                .gauge().value());
        assertEquals(1.0, registry.find("rdmarpc.rdma.device.open").tag("device", "latedev").gauge().value());
        late.connections.set(0);
        late.open.set(0);
    }
}
