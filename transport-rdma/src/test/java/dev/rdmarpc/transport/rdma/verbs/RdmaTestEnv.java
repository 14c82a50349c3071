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
 * Settings of the RDMA-tagged tests (system properties, defaults for the rxe guest) and small helpers.
 * <ul>
 *   <li>{@code rdmarpc.test.device} (default {@code rxe0}), {@code rdmarpc.test.port} (1),
 *       {@code rdmarpc.test.gidIndex} (1: RoCE v2, IPv4-mapped, on the rxe guest)</li>
 *   <li>{@code rdmarpc.test.timeoutScale} (1; the rxe guest runs with 30: Java is 15–35× slower there)</li>
 * </ul>
 */
final class RdmaTestEnv {
    static final String DEVICE = System.getProperty("rdmarpc.test.device", "rxe0");
    static final int PORT = Integer.getInteger("rdmarpc.test.port", 1);
    static final int GID_INDEX = Integer.getInteger("rdmarpc.test.gidIndex", 1);
    static final long TIMEOUT_SCALE = Long.getLong("rdmarpc.test.timeoutScale", 1);

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
            if (!p.waitFor(timeout(5_000), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
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
