package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.DeviceList;
import dev.rdmarpc.transport.rdma.verbs.Verbs;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * On a machine without RDMA (ENOSYS, no device) the upgrader is on the class path, says no at once, logs why once and
 * counts it (also as the Micrometer meter {@code rdmarpc.rdma.fallbacks}, tagged by reason, of the registry a server
 * or channel is built with); calls run over TCP, and a channel that insists on RDMA fails with a clear status.
 */
class NoRdmaFallbackTest {

    private static void assumeNoRdma() {
        try (DeviceList list = Verbs.deviceList()) {
            assumeTrue(list.isEmpty(), "this machine has an RDMA device; the fallback is covered by the rdma tests");
        }
    }

    @Test
    void upgraderSaysNoFastAndCountsTheReason() {
        assumeNoRdma();
        RdmaConnectionUpgrader up = new RdmaConnectionUpgrader();
        assertEquals("rdma", up.name());
        assertEquals(1, up.capabilityId());
        long before = RdmaMetrics.snapshot().fallbacks();
        long t0 = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            assertNull(up.prepare(null, SlabPool.shared(), i % 2 == 0));
        }
        long micros = (System.nanoTime() - t0) / 1000 / 100;
        RdmaMetrics.Snapshot s = RdmaMetrics.snapshot();
        assertEquals(before + 100, s.fallbacks());
        assertTrue(s.fallbackReasons().getOrDefault(Fallbacks.NO_DEVICE, 0L) >= 100, s.toString());
        System.out.println("[rdma] prepare() without a device: " + micros + " µs per call (not asserted)");
    }

    @Test
    void fallbacksAreAMicrometerMeterOfTheRegistryGivenToTheBuilders() throws Exception {
        assumeNoRdma();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        EchoService service = new EchoService();
        RpcServer server = RpcServer.forPort(0).addService(service.definition()).meterRegistry(registry).build().start();
        try (RpcChannel auto = RpcChannel.forAddress("127.0.0.1", server.getPort()).meterRegistry(registry).build()) {
            FunctionCounter fallbacks = registry.find("rdmarpc.rdma.fallbacks").tag("reason", Fallbacks.NO_DEVICE)
                    .functionCounter();
            assertNotNull(fallbacks, () -> "rdmarpc.rdma.fallbacks{reason=no-device} is registered: " + meterNames(registry));
            assertEquals(Fallbacks.REASONS.size(), registry.find("rdmarpc.rdma.fallbacks").functionCounters().size(),
                    () -> "one rdmarpc.rdma.fallbacks meter per reason: " + meterNames(registry));
            for (String name : new String[] {"rdmarpc.rdma.sends", "rdmarpc.rdma.upgrades", "rdmarpc.rdma.protocol.errors",
                    "rdmarpc.rdma.srq.posted", "rdmarpc.rdma.connections"}) {
                assertNotNull(registry.find(name).meter(), () -> name + " is registered: " + meterNames(registry));
            }
            double before = fallbacks.count();
            byte[] req = Bytes.pattern(100, 5);
            assertArrayEquals(req, ClientCalls.blockingUnaryCall(auto, EchoService.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), req));
            assertEquals("tcp", auto.currentTransport());
            assertTrue(fallbacks.count() >= before + 1, "the fallback moved the meter: " + before + " -> "
                    + fallbacks.count());
            double allReasons = registry.find("rdmarpc.rdma.fallbacks").functionCounters().stream()
                    .mapToDouble(FunctionCounter::count).sum();
            assertEquals(RdmaMetrics.snapshot().fallbacks(), (long) allReasons, "the reasons add up to the counter");
        } finally {
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static String meterNames(MeterRegistry registry) {
        return registry.getMeters().stream().map(m -> m.getId().getName()).distinct().sorted().toList().toString();
    }

    @Test
    void callsStayOnTcpAndForcedRdmaFailsClearly() throws Exception {
        assumeNoRdma();
        EchoService service = new EchoService();
        RpcServer server = RpcServer.forPort(0).addService(service.definition()).build().start();
        try (RpcChannel auto = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
             RpcChannel forced = RpcChannel.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.RDMA).build()) {
            long before = RdmaMetrics.snapshot().fallbacks();
            byte[] req = Bytes.pattern(4096, 3);
            assertArrayEquals(req, ClientCalls.blockingUnaryCall(auto, EchoService.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), req));
            assertEquals("tcp", auto.currentTransport());
            assertTrue(RdmaMetrics.snapshot().fallbacks() > before, "the client's fallback was counted");
            StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(forced,
                    EchoService.ECHO, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), req));
            assertTrue(e.getStatus().getDescription().contains("RDMA"), e.getStatus().toString());
        } finally {
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
