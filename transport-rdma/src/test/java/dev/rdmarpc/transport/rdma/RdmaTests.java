package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.fail;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Settings and helpers of the RDMA-tagged end-to-end tests. The completion poller runs with the shipped default (spin
 * {@code spinMicros}, then arm the CQ and block) unless {@code -Drdmarpc.rdma.spinMicros} says otherwise (the guest runs
 * some classes a second time with 0, event mode); the SRQ is small (128) and each connection gets 32 credits, so a few
 * connections already oversubscribe the SRQ. {@code rdmarpc.test.timeoutScale} (30 in the guest) multiplies every
 * timeout.
 */
final class RdmaTests {
    static final long TIMEOUT_SCALE = Long.getLong("rdmarpc.test.timeoutScale", 1);

    static {
        setDefault("rdmarpc.rdma.srqDepth", "128");
        setDefault("rdmarpc.rdma.credits", "32");
        // device contexts stay open between tests (tests hold on to them); the lifecycle test sets its own linger
        setDefault("rdmarpc.rdma.contextLingerMillis", String.valueOf(Long.MAX_VALUE / 4));
    }

    private RdmaTests() {
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** Makes sure the defaults above are in place before the device context opens. */
    static void init() {
    }

    /** {@code baseMillis} scaled for the environment. */
    static long timeout(long baseMillis) {
        return baseMillis * TIMEOUT_SCALE;
    }

    static void log(String message) {
        System.out.println("[rdma] " + message);
    }

    /**
     * Waits until {@code condition} holds, failing with {@code what()} after {@code millis} (scaled), or after
     * {@link Await#DEFAULT_BOUND} if that is longer: the bound only ends a hung test.
     */
    static void await(long millis, BooleanSupplier condition, java.util.function.Supplier<String> what) {
        Duration bound = Duration.ofMillis(timeout(millis));
        Await.until(bound.compareTo(Await.DEFAULT_BOUND) > 0 ? bound : Await.DEFAULT_BOUND, condition, what);
    }

    /** The shared device context, opened now; fails (never skips) when there is no device: RDMA tests were asked for. */
    static RdmaDeviceContext context() {
        init();
        try {
            RdmaDeviceContext c = RdmaDeviceContext.shared();
            c.pin(); // tests hold on to the default context: it stays open while no connection uses it
            return c;
        } catch (DeviceSelector.Unavailable e) {
            return fail("no usable RDMA device: " + e.getMessage());
        }
    }

    /**
     * What must be back after every test: slab buffers, memory regions = slabs on every open device context, no window
     * or grant region, no QP, full SRQs.
     */
    record Baseline(long buffers) {
        static Baseline now() {
            return new Baseline(SlabPool.shared().inUseBuffers());
        }

        boolean reached() {
            RdmaMetrics.Snapshot s = RdmaMetrics.snapshot();
            List<RdmaDeviceContext> contexts = DeviceContexts.all();
            boolean receivesFull = contexts.stream().allMatch(c -> c.postedReceives() == c.srqDepth() && c.queuePairs() == 0);
            return SlabPool.shared().inUseBuffers() == buffers && s.connections() == 0 && s.boundWindows() == 0
                    && s.rendezvousRegions() == 0 && s.slabRegions() == SlabPool.shared().slabCount() * (long) contexts.size()
                    && receivesFull;
        }

        String describe() {
            RdmaMetrics.Snapshot s = RdmaMetrics.snapshot();
            StringBuilder perDevice = new StringBuilder();
            for (RdmaDeviceContext c : DeviceContexts.all()) {
                perDevice.append(c.deviceName()).append(": SRQ posted ").append(c.postedReceives()).append('/')
                        .append(c.srqDepth()).append(", queue pairs ").append(c.queuePairs()).append("; ");
            }
            return "slab buffers in use " + SlabPool.shared().inUseBuffers() + " (baseline " + buffers + "), RDMA connections "
                    + s.connections() + ", bound windows " + s.boundWindows() + ", rendezvous regions "
                    + s.rendezvousRegions() + ", slab regions " + s.slabRegions() + " for " + SlabPool.shared().slabCount()
                    + " slabs on " + DeviceContexts.all().size() + " device contexts, " + perDevice
                    + SlabPool.shared().describeLiveBuffers();
        }

        void await() {
            RdmaTests.await(20_000, this::reached, this::describe);
        }
    }

    /** Collects log records of the transport and core while open. */
    static final class LogCapture extends Handler implements AutoCloseable {
        private final List<Logger> loggers = new ArrayList<>();
        private final List<String> messages = new ArrayList<>();

        LogCapture() {
            for (String name : List.of("dev.rdmarpc.transport.rdma", "dev.rdmarpc.core.Connection", "dev.rdmarpc.transport.tcp")) {
                Logger l = Logger.getLogger(name);
                l.addHandler(this);
                loggers.add(l);
            }
        }

        @Override
        public synchronized void publish(LogRecord r) {
            String msg = r.getMessage();
            if (r.getParameters() != null) {
                msg = java.text.MessageFormat.format(msg, r.getParameters());
            }
            messages.add(r.getLevel() + " " + msg);
        }

        synchronized List<String> messages() {
            return List.copyOf(messages);
        }

        /** Whether a captured message contains every one of {@code parts}. */
        boolean contains(String... parts) {
            for (String m : messages()) {
                boolean all = true;
                for (String p : parts) {
                    all &= m.contains(p);
                }
                if (all) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            for (Logger l : loggers) {
                l.removeHandler(this);
            }
        }
    }
}
