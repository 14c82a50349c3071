package dev.rdmarpc.transport.rdma;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide counters of the RDMA transport: which path each SEND took (inline, eager, rendezvous), bytes, credits,
 * the shared receive queue, fallbacks to TCP and live verbs resources; per device and port, its context's state,
 * connections, upgrades and completion errors ({@link DeviceSnapshot}). Tests read {@link #snapshot()}; with Micrometer
 * on the class path {@link #bindTo} publishes them as meters. Counting allocates nothing.
 */
public final class RdmaMetrics {
    static final LongAdder INLINE_SENDS = new LongAdder();
    static final LongAdder INLINE_BYTES = new LongAdder();
    static final LongAdder EAGER_SENDS = new LongAdder();
    static final LongAdder EAGER_BYTES = new LongAdder();
    static final LongAdder RENDEZVOUS_SENDS = new LongAdder();
    static final LongAdder RENDEZVOUS_BYTES = new LongAdder();
    static final LongAdder RENDEZVOUS_READS = new LongAdder();
    static final LongAdder RENDEZVOUS_READ_BYTES = new LongAdder();
    static final LongAdder RECEIVES = new LongAdder();
    static final LongAdder RECEIVE_BYTES = new LongAdder();
    static final LongAdder CREDIT_STALLS = new LongAdder();
    static final LongAdder CREDIT_UPDATES = new LongAdder();
    static final LongAdder SRQ_LIMIT_EVENTS = new LongAdder();
    static final LongAdder SRQ_POSTS = new LongAdder();
    static final LongAdder COMPLETION_ERRORS = new LongAdder();
    static final LongAdder UPGRADES = new LongAdder();
    static final LongAdder PROTOCOL_ERRORS = new LongAdder();
    static final LongAdder POLLER_WAKEUPS = new LongAdder();
    static final LongAdder DRAIN_TIMEOUTS = new LongAdder();
    /** RDMA connections whose path failed after setup ({@link PathFaults}); their peers are remembered for a while. */
    static final LongAdder PATH_FAULTS = new LongAdder();
    /** Device faults (port down, device fatal, SRQ or CQ error) that closed a device context's connections. */
    static final LongAdder DEVICE_FAULTS = new LongAdder();
    /**
     * Completions the poller found only after its idle wait timed out with no completion event pending: a lost
     * wake-up, which delays calls by up to a second. Stays 0 unless arming the CQ races with a completion wrongly.
     */
    static final LongAdder LOST_WAKEUPS = new LongAdder();
    /** MESSAGE frames core kept in the transport's buffer (an SRQ buffer or a READ destination) instead of copying. */
    static final LongAdder MESSAGE_FRAMES_KEPT = new LongAdder();
    /** MESSAGE frames core copied out of the transport's buffer (small, or part of a larger message). */
    static final LongAdder MESSAGE_FRAMES_COPIED = new LongAdder();
    static final AtomicLong CONNECTIONS = new AtomicLong();
    /** Device contexts open now. */
    static final AtomicLong DEVICE_CONTEXTS = new AtomicLong();
    static final AtomicLong SLAB_REGIONS = new AtomicLong();
    static final AtomicLong RENDEZVOUS_REGIONS = new AtomicLong();
    /** Registrations of application memory (attachments) held by the connections' registration caches. */
    static final AtomicLong ATTACHMENT_REGIONS = new AtomicLong();
    static final AtomicLong BOUND_WINDOWS = new AtomicLong();
    static final AtomicLong POSTED_RECEIVES = new AtomicLong();
    static final AtomicLong MIN_POSTED_RECEIVES = new AtomicLong(Long.MAX_VALUE);
    private static final ConcurrentHashMap<String, LongAdder> FALLBACK_REASONS = new ConcurrentHashMap<>();
    /** The most bytes of rendezvous destinations one connection held at once, over all connections. */
    private static final AtomicLong PEAK_READ_BYTES_HELD = new AtomicLong();

    private RdmaMetrics() {
    }

    /** Counters of one RDMA device and port, kept for the process's life (a closed context's gauges read 0). */
    static final class DeviceCounters {
        final String device;
        final int port;
        /** 1 while the device's context is open. */
        final AtomicLong open = new AtomicLong();
        final LongAdder opened = new LongAdder();
        final AtomicLong connections = new AtomicLong();
        final LongAdder upgrades = new LongAdder();
        final LongAdder completionErrors = new LongAdder();

        DeviceCounters(String device, int port) {
            this.device = device;
            this.port = port;
        }

        DeviceSnapshot snapshot() {
            return new DeviceSnapshot(device, port, open.get() != 0, opened.sum(), connections.get(), upgrades.sum(),
                    completionErrors.sum());
        }
    }

    /**
     * One device and port's counters.
     *
     * @param device           the device's name (e.g. {@code mlx5_0}, {@code rxe0})
     * @param port             the port number (from 1)
     * @param open             whether its device context is open now (gauge)
     * @param opened           how many times its context was opened (closed contexts reopen on demand)
     * @param connections      RDMA connections on it now (gauge)
     * @param upgrades         connections moved to RDMA on it
     * @param completionErrors work completions with an error status on it (flushes excluded)
     */
    public record DeviceSnapshot(String device, int port, boolean open, long opened, long connections, long upgrades,
                                 long completionErrors) {
        /** Counter differences {@code this - before} (gauges are taken from this snapshot). */
        public DeviceSnapshot minus(DeviceSnapshot before) {
            return before == null ? this : new DeviceSnapshot(device, port, open, opened - before.opened, connections,
                    upgrades - before.upgrades, completionErrors - before.completionErrors);
        }
    }

    private static final ConcurrentHashMap<String, DeviceCounters> DEVICES = new ConcurrentHashMap<>();
    /** Micrometer registries bound so far (typed Object: Micrometer is optional), to publish devices seen later. */
    private static final java.util.List<Object> BOUND = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The counters of {@code device} and {@code port}, made (and published on bound registries) at first use. */
    static DeviceCounters device(String device, int port) {
        String key = device + "/" + port;
        DeviceCounters c = DEVICES.get(key);
        if (c != null) {
            return c;
        }
        synchronized (DEVICES) {
            c = DEVICES.get(key);
            if (c == null) {
                c = new DeviceCounters(device, port);
                DEVICES.put(key, c);
                for (Object r : BOUND) {
                    MicrometerBinding.bindDevice((io.micrometer.core.instrument.MeterRegistry) r, c);
                }
            }
            return c;
        }
    }

    /** A point-in-time copy of every counter. */
    public record Snapshot(long inlineSends, long inlineBytes, long eagerSends, long eagerBytes, long rendezvousSends,
                           long rendezvousBytes, long rendezvousReads, long rendezvousReadBytes, long receives,
                           long receiveBytes, long creditStalls, long creditUpdates, long srqLimitEvents, long srqPosts,
                           long completionErrors, long drainTimeouts, long upgrades, long fallbacks, long protocolErrors, long connections,
                           long slabRegions, long rendezvousRegions, long boundWindows, long postedReceives,
                           long minPostedReceives, Map<String, Long> fallbackReasons, Map<String, DeviceSnapshot> devices) {
        /** SENDs of any kind. */
        public long sends() {
            return inlineSends + eagerSends;
        }

        /** Counter differences {@code this - before} (gauges are taken from this snapshot). */
        public Snapshot minus(Snapshot before) {
            Map<String, Long> reasons = new TreeMap<>(fallbackReasons);
            before.fallbackReasons.forEach((k, v) -> reasons.merge(k, -v, Long::sum));
            return new Snapshot(inlineSends - before.inlineSends, inlineBytes - before.inlineBytes,
                    eagerSends - before.eagerSends, eagerBytes - before.eagerBytes,
                    rendezvousSends - before.rendezvousSends, rendezvousBytes - before.rendezvousBytes,
                    rendezvousReads - before.rendezvousReads, rendezvousReadBytes - before.rendezvousReadBytes,
                    receives - before.receives, receiveBytes - before.receiveBytes,
                    creditStalls - before.creditStalls, creditUpdates - before.creditUpdates,
                    srqLimitEvents - before.srqLimitEvents, srqPosts - before.srqPosts,
                    completionErrors - before.completionErrors, drainTimeouts - before.drainTimeouts,
                    upgrades - before.upgrades,
                    fallbacks - before.fallbacks, protocolErrors - before.protocolErrors, connections, slabRegions,
                    rendezvousRegions, boundWindows, postedReceives, minPostedReceives, Map.copyOf(reasons),
                    devicesMinus(before));
        }

        private Map<String, DeviceSnapshot> devicesMinus(Snapshot before) {
            Map<String, DeviceSnapshot> d = new TreeMap<>();
            devices.forEach((k, v) -> d.put(k, v.minus(before.devices.get(k))));
            return Map.copyOf(d);
        }
    }

    /** Every counter now. */
    public static Snapshot snapshot() {
        Map<String, Long> reasons = new TreeMap<>();
        long fallbacks = 0;
        for (Map.Entry<String, LongAdder> e : FALLBACK_REASONS.entrySet()) {
            long n = e.getValue().sum();
            if (n != 0) {
                reasons.put(e.getKey(), n);
                fallbacks += n;
            }
        }
        long min = MIN_POSTED_RECEIVES.get();
        return new Snapshot(INLINE_SENDS.sum(), INLINE_BYTES.sum(), EAGER_SENDS.sum(), EAGER_BYTES.sum(),
                RENDEZVOUS_SENDS.sum(), RENDEZVOUS_BYTES.sum(), RENDEZVOUS_READS.sum(), RENDEZVOUS_READ_BYTES.sum(),
                RECEIVES.sum(), RECEIVE_BYTES.sum(), CREDIT_STALLS.sum(), CREDIT_UPDATES.sum(), SRQ_LIMIT_EVENTS.sum(),
                SRQ_POSTS.sum(), COMPLETION_ERRORS.sum(), DRAIN_TIMEOUTS.sum(), UPGRADES.sum(), fallbacks, PROTOCOL_ERRORS.sum(),
                CONNECTIONS.get(), SLAB_REGIONS.get(), RENDEZVOUS_REGIONS.get(), BOUND_WINDOWS.get(),
                POSTED_RECEIVES.get(), min == Long.MAX_VALUE ? -1 : min, Map.copyOf(reasons), devices());
    }

    /** Every device's counters now, by {@code device/port}. */
    private static Map<String, DeviceSnapshot> devices() {
        Map<String, DeviceSnapshot> d = new TreeMap<>();
        DEVICES.forEach((k, v) -> d.put(k, v.snapshot()));
        return Map.copyOf(d);
    }

    /** Records that a connection holds {@code bytes} of rendezvous destinations now. */
    static void recordReadBytesHeld(long bytes) {
        if (bytes > PEAK_READ_BYTES_HELD.get()) {
            PEAK_READ_BYTES_HELD.accumulateAndGet(bytes, Math::max);
        }
    }

    /** The most bytes of rendezvous destinations one connection held at once since the last reset. */
    static long peakReadBytesHeld() {
        return PEAK_READ_BYTES_HELD.get();
    }

    /** Starts a new peak of rendezvous destination bytes (tests reset it before a burst). */
    static void resetPeakReadBytesHeld() {
        PEAK_READ_BYTES_HELD.set(0);
    }

    /** Starts a new low-water mark of posted SRQ receives (tests reset it before a burst). */
    public static void resetLowWaterMark() {
        MIN_POSTED_RECEIVES.set(POSTED_RECEIVES.get());
    }

    /**
     * Publishes the counters on a Micrometer {@code MeterRegistry} as {@code rdmarpc.rdma.*} function counters and
     * gauges (needs micrometer-core on the class path).
     */
    public static void bindTo(io.micrometer.core.instrument.MeterRegistry registry) {
        synchronized (DEVICES) {
            if (MicrometerBinding.bind(registry)) {
                BOUND.add(registry);
                for (DeviceCounters c : DEVICES.values()) {
                    MicrometerBinding.bindDevice(registry, c);
                }
            }
        }
    }

    static void fallback(String reasonKey) {
        fallbackReason(reasonKey).increment();
    }

    static void postedReceives(long posted) {
        POSTED_RECEIVES.set(posted);
        long min;
        while (posted < (min = MIN_POSTED_RECEIVES.get())) {
            if (MIN_POSTED_RECEIVES.compareAndSet(min, posted)) {
                break;
            }
        }
    }

    /** The counter of one fallback reason (created at first use). */
    static LongAdder fallbackReason(String reasonKey) {
        return FALLBACK_REASONS.computeIfAbsent(reasonKey, k -> new LongAdder());
    }
}
