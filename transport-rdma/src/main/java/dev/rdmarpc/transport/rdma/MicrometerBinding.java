package dev.rdmarpc.transport.rdma;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Registers {@link RdmaMetrics}' counters with Micrometer; loaded only when {@link RdmaMetrics#bindTo} is called. */
final class MicrometerBinding {
    private MicrometerBinding() {
    }

    /** Registers every meter once per registry (a server and a channel often share one); false if bound already. */
    static synchronized boolean bind(MeterRegistry r) {
        if (r.find("rdmarpc.rdma.upgrades").functionCounter() != null) {
            return false; // bound already: registering again would only log Micrometer's duplicate warning
        }
        counter(r, "rdmarpc.rdma.sends", "path", "inline", RdmaMetrics.INLINE_SENDS, "SENDs posted inline");
        counter(r, "rdmarpc.rdma.sends", "path", "eager", RdmaMetrics.EAGER_SENDS, "SENDs posted from a registered slab");
        counter(r, "rdmarpc.rdma.sends", "path", "rendezvous", RdmaMetrics.RENDEZVOUS_SENDS,
                "frames offered for RDMA READ (RTS)");
        counter(r, "rdmarpc.rdma.bytes.sent", "path", "inline", RdmaMetrics.INLINE_BYTES, "bytes sent inline");
        counter(r, "rdmarpc.rdma.bytes.sent", "path", "eager", RdmaMetrics.EAGER_BYTES, "bytes sent eagerly");
        counter(r, "rdmarpc.rdma.bytes.sent", "path", "rendezvous", RdmaMetrics.RENDEZVOUS_BYTES,
                "payload bytes offered for RDMA READ");
        counter(r, "rdmarpc.rdma.reads", null, null, RdmaMetrics.RENDEZVOUS_READS, "rendezvous RDMA READs completed");
        counter(r, "rdmarpc.rdma.bytes.read", null, null, RdmaMetrics.RENDEZVOUS_READ_BYTES, "bytes pulled by RDMA READ");
        counter(r, "rdmarpc.rdma.receives", null, null, RdmaMetrics.RECEIVES, "SENDs received");
        counter(r, "rdmarpc.rdma.bytes.received", null, null, RdmaMetrics.RECEIVE_BYTES, "bytes received by SEND");
        counter(r, "rdmarpc.rdma.credit.stalls", null, null, RdmaMetrics.CREDIT_STALLS, "sends that waited for credits");
        counter(r, "rdmarpc.rdma.credit.updates", null, null, RdmaMetrics.CREDIT_UPDATES, "credit-only frames sent");
        counter(r, "rdmarpc.rdma.srq.limit.events", null, null, RdmaMetrics.SRQ_LIMIT_EVENTS,
                "IBV_EVENT_SRQ_LIMIT_REACHED events");
        counter(r, "rdmarpc.rdma.srq.posts", null, null, RdmaMetrics.SRQ_POSTS, "receives posted to the SRQ");
        counter(r, "rdmarpc.rdma.completion.errors", null, null, RdmaMetrics.COMPLETION_ERRORS,
                "work completions with an error status (flushes excluded)");
        counter(r, "rdmarpc.rdma.drain.timeouts", null, null, RdmaMetrics.DRAIN_TIMEOUTS,
                "closed queue pairs destroyed without their flush completions");
        counter(r, "rdmarpc.rdma.upgrades", null, null, RdmaMetrics.UPGRADES, "connections moved to RDMA");
        counter(r, "rdmarpc.rdma.path.faults", null, null, RdmaMetrics.PATH_FAULTS,
                "RDMA connections whose path failed after setup (their peers stay on TCP for a while)");
        counter(r, "rdmarpc.rdma.device.faults", null, null, RdmaMetrics.DEVICE_FAULTS,
                "port-down, device-fatal, SRQ and CQ error events that closed a device's connections");
        counter(r, "rdmarpc.rdma.poller.lost.wakeups", null, null, RdmaMetrics.LOST_WAKEUPS,
                "completions found only after the poller's idle wait timed out without an event");
        for (String reason : Fallbacks.REASONS) {
            counter(r, "rdmarpc.rdma.fallbacks", "reason", reason, RdmaMetrics.fallbackReason(reason),
                    "connections left on TCP, by reason");
        }
        counter(r, "rdmarpc.rdma.protocol.errors", null, null, RdmaMetrics.PROTOCOL_ERRORS,
                "RDMA connections closed for bad input");
        gauge(r, "rdmarpc.rdma.connections", RdmaMetrics.CONNECTIONS, "open RDMA connections");
        gauge(r, "rdmarpc.rdma.regions", RdmaMetrics.SLAB_REGIONS, "slabs registered as memory regions");
        gauge(r, "rdmarpc.rdma.rendezvous.regions", RdmaMetrics.RENDEZVOUS_REGIONS,
                "per-rendezvous memory regions alive");
        gauge(r, "rdmarpc.rdma.windows.bound", RdmaMetrics.BOUND_WINDOWS, "memory windows granting a rendezvous read");
        gauge(r, "rdmarpc.rdma.srq.posted", RdmaMetrics.POSTED_RECEIVES, "receives posted on the shared receive queue");
        return true;
    }

    /** Registers one device and port's meters, tagged {@code device} and {@code port}. */
    static synchronized void bindDevice(MeterRegistry r, RdmaMetrics.DeviceCounters c) {
        Tags tags = Tags.of("device", c.device, "port", Integer.toString(c.port));
        Gauge.builder("rdmarpc.rdma.device.open", c.open, AtomicLong::doubleValue).tags(tags)
                .description("1 while the device's context is open").register(r);
        Gauge.builder("rdmarpc.rdma.device.connections", c.connections, AtomicLong::doubleValue).tags(tags)
                .description("open RDMA connections on the device").register(r);
        FunctionCounter.builder("rdmarpc.rdma.device.opens", c.opened, LongAdder::doubleValue).tags(tags)
                .description("times the device's context was opened").register(r);
        FunctionCounter.builder("rdmarpc.rdma.device.upgrades", c.upgrades, LongAdder::doubleValue).tags(tags)
                .description("connections moved to RDMA on the device").register(r);
        FunctionCounter.builder("rdmarpc.rdma.device.completion.errors", c.completionErrors, LongAdder::doubleValue)
                .tags(tags).description("work completions with an error status on the device (flushes excluded)").register(r);
    }

    private static void counter(MeterRegistry r, String name, String tagKey, String tagValue, LongAdder adder,
                                String description) {
        FunctionCounter.Builder<LongAdder> b = FunctionCounter.builder(name, adder, LongAdder::doubleValue)
                .description(description);
        if (tagKey != null) {
            b.tag(tagKey, tagValue);
        }
        b.register(r);
    }

    private static void gauge(MeterRegistry r, String name, AtomicLong value, String description) {
        Gauge.builder(name, value, AtomicLong::doubleValue).description(description).register(r);
    }
}
