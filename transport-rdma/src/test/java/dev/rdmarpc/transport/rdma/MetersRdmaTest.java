package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.RpcChannel;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The RDMA counters as Micrometer meters: a registry given to the server's and the channel's builders
 * ({@code meterRegistry(...)}) gets every {@code rdmarpc.rdma.*} meter, and the per-path ones move with calls that
 * take each path (64 B inline, 4 KiB eager, 1 MiB rendezvous); the SRQ posted-depth and connection gauges read the
 * live values.
 */
@Tag("rdma")
class MetersRdmaTest extends RdmaEndToEndBase {

    @Test
    void metersOfTheBuildersRegistryExistAndMove() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        startServer(b -> b.meterRegistry(registry));
        RpcChannel ch = channel(b -> b.meterRegistry(registry));
        echo(ch, new byte[1], 30_000);
        assertRdma(ch);
        Map<String, Double> before = counters(registry);
        log("meters before: " + before);
        echo(ch, Bytes.pattern(64, 1), 30_000);
        echo(ch, Bytes.pattern(4096, 2), 30_000);
        byte[] big = Bytes.pattern(1 << 20, 3);
        assertEquals(-1, Bytes.mismatch(big, echo(ch, big, 60_000)));
        Map<String, Double> after = counters(registry);
        log("meters after 64 B, 4 KiB and 1 MiB echoes: " + after);
        for (String moved : new String[] {"rdmarpc.rdma.sends{path=inline}", "rdmarpc.rdma.sends{path=eager}",
                "rdmarpc.rdma.sends{path=rendezvous}", "rdmarpc.rdma.bytes.sent{path=inline}",
                "rdmarpc.rdma.bytes.sent{path=eager}", "rdmarpc.rdma.bytes.sent{path=rendezvous}", "rdmarpc.rdma.reads",
                "rdmarpc.rdma.bytes.read", "rdmarpc.rdma.receives", "rdmarpc.rdma.bytes.received"}) {
            assertTrue(after.get(moved) > before.get(moved), () -> moved + " moved: " + before.get(moved) + " -> "
                    + after.get(moved));
        }
        assertTrue(after.get("rdmarpc.rdma.bytes.sent{path=rendezvous}") - before.get("rdmarpc.rdma.bytes.sent{path=rendezvous}")
                >= 2 * (1 << 20), "both 1 MiB messages were offered by rendezvous");
        assertEquals(RdmaMetrics.snapshot().upgrades(), after.get("rdmarpc.rdma.upgrades").longValue(),
                "the upgrades meter reads the counter");
        Gauge posted = registry.find("rdmarpc.rdma.srq.posted").gauge();
        Gauge connections = registry.find("rdmarpc.rdma.connections").gauge();
        Gauge regions = registry.find("rdmarpc.rdma.regions").gauge();
        assertNotNull(posted);
        assertNotNull(connections);
        assertNotNull(regions);
        RdmaDeviceContext c = RdmaTests.context();
        RdmaTests.await(10_000, () -> posted.value() == c.postedReceives() && posted.value() > 0,
                () -> "SRQ posted gauge " + posted.value() + " vs " + c.postedReceives());
        assertEquals(2.0, connections.value(), "both ends of the connection are RDMA connections");
        assertTrue(regions.value() > 0, "slabs are registered: " + regions.value());
    }

    /** Every rdmarpc.rdma function counter as name{tag=value} → count. */
    private static Map<String, Double> counters(SimpleMeterRegistry registry) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (FunctionCounter f : registry.find("rdmarpc.rdma.sends").functionCounters()) {
            m.put("rdmarpc.rdma.sends{path=" + f.getId().getTag("path") + "}", f.count());
        }
        for (FunctionCounter f : registry.find("rdmarpc.rdma.bytes.sent").functionCounters()) {
            m.put("rdmarpc.rdma.bytes.sent{path=" + f.getId().getTag("path") + "}", f.count());
        }
        for (String name : new String[] {"rdmarpc.rdma.reads", "rdmarpc.rdma.bytes.read", "rdmarpc.rdma.receives",
                "rdmarpc.rdma.bytes.received", "rdmarpc.rdma.upgrades", "rdmarpc.rdma.fallbacks",
                "rdmarpc.rdma.protocol.errors"}) {
            FunctionCounter f = registry.find(name).functionCounter();
            assertNotNull(f, () -> name + " is registered: " + NoRdmaFallbackTest.meterNames(registry));
            m.put(name, f.count());
        }
        return m;
    }
}
