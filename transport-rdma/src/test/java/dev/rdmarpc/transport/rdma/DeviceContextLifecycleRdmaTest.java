package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A device context lives as long as connections use it: servers and channels on the guest's second device (rxe1,
 * 192.168.78.1, which no other test pins) are opened and shut down in a loop, and after each round the context is
 * closed (linger 0), the kernel's count of that device's verbs objects ({@code rdma resource show}: contexts, PDs,
 * CQs, SRQs, QPs, MRs) is back where it was before the first round, and slab buffers and slab regions are back to
 * baseline. The next round opens the device again.
 */
@Tag("rdma")
class DeviceContextLifecycleRdmaTest {
    private static final String ADDRESS = "192.168.78.1";
    private String savedLinger;

    @BeforeEach
    void closeUnusedContextsAtOnce() {
        RdmaTests.init();
        savedLinger = System.getProperty(DeviceContexts.LINGER_PROPERTY);
        System.setProperty(DeviceContexts.LINGER_PROPERTY, "0");
    }

    @AfterEach
    void restoreLinger() {
        if (savedLinger == null) {
            System.clearProperty(DeviceContexts.LINGER_PROPERTY);
        } else {
            System.setProperty(DeviceContexts.LINGER_PROPERTY, savedLinger);
        }
    }

    @Test
    void aDeviceContextClosesWithItsLastConnectionAndOpensAgainForTheNext() throws Exception {
        var match = GidTable.find(GidTable.SYSFS, InetAddress.getByName(ADDRESS), null, 0);
        assumeTrue(match.isPresent(), "no RDMA device has " + ADDRESS + " (the guest's rxe1)");
        String device = match.get().device();
        DeviceContexts.closeUnused(); // earlier tests may have left one open (their linger is long)
        RdmaTests.await(10_000, () -> contextOf(device) == null, () -> "no context of " + device + " is open before the test");
        Map<String, Long> kernelBefore = kernelResources(device);
        long buffers = SlabPool.shared().inUseBuffers();
        long contexts = RdmaMetrics.DEVICE_CONTEXTS.get();
        log(device + " before: " + kernelBefore + ", " + contexts + " device contexts open");
        byte[] req = Bytes.pattern(200_000, 4); // rendezvous: windows or regions, reads
        for (int round = 1; round <= 3; round++) {
            RpcServer server = RpcServer.forPort(0).addService(new EchoService().definition()).build().start();
            RpcChannel channel = RpcChannel.forAddress(ADDRESS, server.getPort()).transportMode(TransportMode.RDMA).build();
            RdmaDeviceContext context;
            try {
                assertEquals(-1, Bytes.mismatch(req, RdmaEndToEndBase.echo(channel, req, 30_000)));
                RdmaEndToEndBase.assertRdma(channel);
                context = contextOf(device);
                assertNotNull(context, "the connection opened a context on " + device);
                assertEquals(contexts + 1, RdmaMetrics.DEVICE_CONTEXTS.get(), "one more device context");
                log("round " + round + ", connected: " + device + " " + kernelResources(device));
            } finally {
                channel.shutdownNow();
                server.shutdownNow();
                channel.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
                server.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
            }
            RdmaDeviceContext used = context;
            RdmaTests.await(20_000, () -> used.isClosed() && contextOf(device) == null,
                    () -> "the context of " + device + " closed with its last connection: closed " + used.isClosed()
                            + ", queue pairs " + used.queuePairs());
            assertEquals(contexts, RdmaMetrics.DEVICE_CONTEXTS.get(), "device contexts back to baseline");
            RdmaTests.await(20_000, () -> kernelBefore.equals(kernelResources(device)),
                    () -> device + "'s verbs objects back to " + kernelBefore + ": " + kernelResources(device));
            RdmaTests.await(20_000, () -> SlabPool.shared().inUseBuffers() == buffers
                            && RdmaMetrics.SLAB_REGIONS.get() == SlabPool.shared().slabCount() * (long) DeviceContexts.all().size(),
                    () -> "slab buffers " + SlabPool.shared().inUseBuffers() + " (baseline " + buffers + "), slab regions "
                            + RdmaMetrics.SLAB_REGIONS.get() + " for " + SlabPool.shared().slabCount() + " slabs on "
                            + DeviceContexts.all().size() + " contexts");
            log("round " + round + ", closed: " + device + " " + kernelResources(device));
        }
        assertTrue(RdmaMetrics.snapshot().connections() == 0, "no RDMA connection left");
    }

    /**
     * Channels that connect one after another to an RDMA-only server while the previous connection's context closes
     * (linger 0) all get RDMA: a connection that arrives during a close waits for it and opens the device again, it
     * is never refused for holding a closed context.
     */
    @Test
    void aConnectionArrivingWhileTheContextClosesOpensItAgain() throws Exception {
        var match = GidTable.find(GidTable.SYSFS, InetAddress.getByName(ADDRESS), null, 0);
        assumeTrue(match.isPresent(), "no RDMA device has " + ADDRESS + " (the guest's rxe1)");
        long buffers = SlabPool.shared().inUseBuffers();
        byte[] req = Bytes.pattern(1_000, 7);
        RpcServer server = RpcServer.forPort(0).addService(new EchoService().definition())
                .transportMode(TransportMode.RDMA).build().start();
        try {
            for (int round = 1; round <= 12; round++) {
                RpcChannel channel = RpcChannel.forAddress(ADDRESS, server.getPort()).transportMode(TransportMode.RDMA).build();
                try {
                    assertEquals(-1, Bytes.mismatch(req, RdmaEndToEndBase.echo(channel, req, 30_000)), "round " + round);
                    RdmaEndToEndBase.assertRdma(channel);
                } finally {
                    channel.shutdownNow();
                    channel.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
                }
            }
        } finally {
            server.shutdownNow();
            server.awaitTermination(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS);
        }
        RdmaTests.await(20_000, () -> SlabPool.shared().inUseBuffers() == buffers,
                () -> "slab buffers " + SlabPool.shared().inUseBuffers() + " (baseline " + buffers + ")");
        RdmaTests.await(20_000, () -> RdmaMetrics.snapshot().connections() == 0,
                () -> RdmaMetrics.snapshot().connections() + " RDMA connections left");
    }

    private static RdmaDeviceContext contextOf(String device) {
        for (RdmaDeviceContext c : DeviceContexts.all()) {
            if (c.deviceName().equals(device)) {
                return c;
            }
        }
        return null;
    }

    /** The kernel's count of {@code device}'s verbs objects, from iproute2's {@code rdma resource show}. */
    private static Map<String, Long> kernelResources(String device) {
        try {
            Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), out);
            for (String line : out.split("\n")) {
                String[] words = line.trim().split("\\s+");
                if (words.length > 2 && words[1].equals(device + ":")) {
                    Map<String, Long> counts = new TreeMap<>();
                    for (int i = 2; i + 1 < words.length; i += 2) {
                        counts.put(words[i], Long.parseLong(words[i + 1]));
                    }
                    return counts;
                }
            }
            throw new AssertionError("rdma resource show has no line for " + device + ":\n" + out);
        } catch (IOException e) {
            throw new AssertionError("cannot run rdma resource show (iproute2)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
