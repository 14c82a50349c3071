package dev.rdmarpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Settings of the RDMA-tagged tests (system properties) and small helpers.
 * <ul>
 *   <li>{@code rdmarpc.test.device}: default the first device with an active port; {@code rdmarpc.test.port}:
 *       default its first active port; {@code rdmarpc.test.gidIndex}: default, on RoCE, a RoCE v2 IPv4-mapped GID if
 *       there is one (index 1 on the rxe guest), else the first non-zero one; 0 on InfiniBand</li>
 *   <li>{@code rdmarpc.test.timeoutScale} (1; the rxe guest runs with 30: Java is 15–35× slower there)</li>
 * </ul>
 */
final class RdmaTestEnv {
    static final String DEVICE;
    static final int PORT;
    static final int GID_INDEX;
    static final long TIMEOUT_SCALE = Long.getLong("rdmarpc.test.timeoutScale", 1);

    static {
        String device = System.getProperty("rdmarpc.test.device");
        int port = Integer.getInteger("rdmarpc.test.port", 0);
        int gidIndex = Integer.getInteger("rdmarpc.test.gidIndex", -1);
        String[] chosen = choose(device, port, gidIndex);
        DEVICE = chosen[0];
        PORT = Integer.parseInt(chosen[1]);
        GID_INDEX = Integer.parseInt(chosen[2]);
    }

    /** Device, port and GID index: what was asked for, else the first device with an active port. */
    private static String[] choose(String device, int port, int gidIndex) {
        try (DeviceList list = Verbs.deviceList()) {
            for (RdmaDevice d : list.devices()) {
                if (device != null && !device.equals(d.name())) {
                    continue;
                }
                try (IbvContext ctx = d.open()) {
                    int ports = ctx.queryDevice().physPortCount();
                    for (int p = port > 0 ? port : 1; p <= (port > 0 ? port : ports); p++) {
                        PortAttributes attrs = ctx.queryPort(p);
                        if (attrs.isActive()) {
                            int g = gidIndex >= 0 ? gidIndex : chooseGid(ctx, p, attrs);
                            return new String[] {d.name(), Integer.toString(p), Integer.toString(g)};
                        }
                    }
                } catch (RuntimeException e) {
                    // try the next device
                }
            }
        } catch (RuntimeException | LinkageError e) {
            // no verbs library: openDevice() reports it
        }
        return new String[] {device == null ? "(no device with an active port)" : device,
                Integer.toString(port > 0 ? port : 1), Integer.toString(Math.max(gidIndex, 0))};
    }

    private static int chooseGid(IbvContext ctx, int port, PortAttributes attrs) {
        if (!attrs.isEthernet()) {
            return 0;
        }
        int best = 0;
        int bestScore = 0;
        for (int i = 0; i < Math.min(attrs.gidTableLength(), 32); i++) {
            Gid gid;
            try {
                gid = ctx.queryGid(port, i);
            } catch (RuntimeException e) {
                continue;
            }
            if (gid.isZero()) {
                continue;
            }
            String type = sysfs("/sys/class/infiniband/" + ctx.deviceName() + "/ports/" + port + "/gid_attrs/types/" + i);
            int score = 1 + (type != null && type.toLowerCase().contains("v2") ? 2 : 0) + (gid.isIpv4Mapped() ? 1 : 0);
            if (score > bestScore) {
                bestScore = score;
                best = i;
            }
        }
        return best;
    }

    private RdmaTestEnv() {
    }

    /** {@code baseMillis} scaled for the environment (30× in the emulated guest). */
    static long timeout(long baseMillis) {
        return baseMillis * TIMEOUT_SCALE;
    }

    /** Opens the test device; fails (never skips) when it is missing: the RDMA tests were asked for. */
    static IbvContext openDevice() {
        try (DeviceList list = Verbs.deviceList()) {
            if (list.isEmpty()) {
                fail("no RDMA device: " + list.emptyReason());
            }
            RdmaDevice device = list.find(DEVICE).orElseThrow(() -> new AssertionError(
                    "device " + DEVICE + " not found in " + list + " (set -Drdmarpc.test.device=...)"));
            return device.open();
        }
    }

    static void log(String message) {
        System.out.println("[rdma] " + message);
    }

    /** A sysfs file's first line, or null. */
    static String sysfs(String path) {
        try {
            return Files.readAllLines(Path.of(path)).getFirst().strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The device's kernel object counts ({@code rdma resource show <dev>}: pd, cq, qp, mr, ctx, srq ...),
     * or null when the {@code rdma} tool is not installed.
     */
    static Map<String, Integer> resourceCounts() {
        try {
            Process p = new ProcessBuilder("rdma", "resource", "show", DEVICE).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(timeout(30_000), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
                return null;
            }
            String[] tokens = out.substring(out.indexOf(DEVICE + ":") + DEVICE.length() + 1).trim().split("\\s+");
            Map<String, Integer> counts = new LinkedHashMap<>();
            for (int i = 0; i + 1 < tokens.length; i += 2) {
                counts.put(tokens[i], Integer.parseInt(tokens[i + 1]));
            }
            return counts;
        } catch (IOException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
