package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.testing.Await;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The scale harness (run by {@code scripts/rdma-vm-test.sh --scale}, or on an RNIC host): one RDMA server in this JVM,
 * client JVMs ({@link ScaleClientMain}) that open 1, 8, 64 and 256 connections to it between them, each forced to RDMA.
 * At each connection count it checks that the server holds that many RDMA connections and queue pairs (exit code 1
 * when not, or when a call failed), prints what the server holds ({@link ServerFootprint}), then measures calls/s at
 * 64 B and 1 MiB: every connection makes a fixed number of unary calls one after the other, all connections at once; a
 * warm-up window, then three measured ones, the median printed, with the share of a CPU the server's completion
 * pollers and the whole server process used. Asserts no figure (they are measurements); prints the goals' checks.
 * System properties: {@code rdmarpc.scale.counts} (1,8,64,256), {@code rdmarpc.scale.clients} (client JVMs, 4),
 * {@code rdmarpc.scale.host} (127.0.0.1), {@code rdmarpc.scale.calls64} / {@code rdmarpc.scale.calls1m} (calls per
 * window over all connections, 512 / 32: sized for the emulated guest, where one connection makes about 40 calls/s;
 * raise them on an RNIC), {@code rdmarpc.scale.minCallsPerConnection} (1),
 * {@code rdmarpc.scale.clientOptions} (the client JVMs' options).
 */
public final class ScaleMain {
    private static final int MIB = 1 << 20;
    private static final int[] SIZES = {64, MIB};
    private static final long ANSWER_MINUTES = 30;

    private final ScaleClients clients;
    private final int minPerConnection = Integer.getInteger("rdmarpc.scale.minCallsPerConnection", 1);
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private boolean failed;

    private ScaleMain(ScaleClients clients) {
        this.clients = clients;
    }

    /** One connection count's results. */
    private record Step(int connections, ServerFootprint footprint, double[] callsPerSecond, double[] pollerShare,
                        double[] processShare) {
    }

    /** Runs the steps and prints their table. */
    public static void main(String[] args) throws Exception {
        int[] counts = Arrays.stream(System.getProperty("rdmarpc.scale.counts", "1,8,64,256").split(","))
                .mapToInt(s -> Integer.parseInt(s.trim())).toArray();
        int jvms = Integer.getInteger("rdmarpc.scale.clients", 4);
        String host = System.getProperty("rdmarpc.scale.host", "127.0.0.1");
        List<String> clientOptions = List.of(System.getProperty("rdmarpc.scale.clientOptions",
                "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx320m").trim().split("\\s+"));
        RpcServer server = RpcServer.forPort(0).addService(ScaleService.definition()).maxInboundMessageSize(4 * MIB)
                .handshakeTimeout(Duration.ofMinutes(10)).build().start();
        System.out.println("rdmarpc-scale: server on port " + server.getPort() + ", " + jvms + " client JVMs, "
                + Runtime.getRuntime().availableProcessors() + " CPUs, spinMicros "
                + System.getProperty("rdmarpc.rdma.spinMicros", "default") + ", " + Runtime.version());
        List<Step> steps = new ArrayList<>();
        boolean failed;
        try (ScaleClients clients = new ScaleClients(jvms, host, server.getPort(), clientOptions)) {
            ScaleMain harness = new ScaleMain(clients);
            for (int n : counts) {
                steps.add(harness.step(n));
            }
            failed = harness.failed;
        } finally {
            server.shutdownNow();
            server.awaitTermination(1, TimeUnit.MINUTES);
        }
        printTable(steps);
        System.out.println("rdmarpc-scale: " + (failed ? "FAILED (see above)" : "OK"));
        System.exit(failed ? 1 : 0);
    }

    private Step step(int n) throws Exception {
        int used = Math.min(n, clients.size());
        int[] share = new int[used];
        for (int i = 0; i < used; i++) {
            share[i] = n / used + (i < n % used ? 1 : 0);
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < used; i++) {
            clients.send(i, "OPEN " + share[i]);
        }
        int onRdma = 0;
        for (int i = 0; i < used; i++) {
            String a = clients.answer(i, ANSWER_MINUTES);
            onRdma += Integer.parseInt(a.substring(a.indexOf("rdma=") + 5));
            if (!a.equals("OPENED " + share[i] + " rdma=" + share[i])) {
                fail("client " + i + " asked for " + share[i] + " RDMA connections: " + a);
            }
        }
        // the server's end of the last connection may still be finishing its upgrade when the client's call returned
        int expected = onRdma;
        Await.until(Duration.ofMinutes(5), () -> RdmaMetrics.snapshot().connections() >= expected,
                () -> "the server's end of " + expected + " RDMA connections: " + RdmaMetrics.snapshot().connections());
        ServerFootprint f = ServerFootprint.now();
        RdmaMetrics.Snapshot s = RdmaMetrics.snapshot();
        System.out.printf("rdmarpc-scale: %d connections (opened in %.1f s): server RDMA connections %d, queue pairs %d, "
                        + "upgrades %d, fallbacks %s, CQs %s; %s%n", n, (System.nanoTime() - t0) / 1e9, f.connections(),
                f.queuePairs(), s.upgrades(), s.fallbackReasons(), cqs(), f);
        if (f.connections() != n || f.queuePairs() != n) {
            fail("the server holds " + f.connections() + " RDMA connections and " + f.queuePairs()
                    + " queue pairs, not " + n);
        }
        double[] rates = new double[SIZES.length];
        double[] poller = new double[SIZES.length];
        double[] process = new double[SIZES.length];
        for (int k = 0; k < SIZES.length; k++) {
            int size = SIZES[k];
            int perConnection = Math.max(minPerConnection, (size == 64 ? Integer.getInteger("rdmarpc.scale.calls64", 512)
                    : Integer.getInteger("rdmarpc.scale.calls1m", 32)) / n);
            window(used, size, perConnection); // warm-up
            double[][] w = new double[3][];
            for (int i = 0; i < 3; i++) {
                w[i] = window(used, size, perConnection);
                System.out.printf("rdmarpc-scale: %d connections, %s: window %d: %.0f calls/s (%d calls per connection), "
                                + "pollers %.0f %% of a CPU, server process %.0f %%%n", n, sizeName(size), i + 1, w[i][0],
                        perConnection, w[i][1] * 100, w[i][2] * 100);
            }
            Arrays.sort(w, (a, b) -> Double.compare(a[0], b[0]));
            rates[k] = w[1][0];
            poller[k] = w[1][1];
            process[k] = w[1][2];
            System.out.printf("rdmarpc-scale: %d connections, %s: median %.0f calls/s%n", n, sizeName(size), rates[k]);
        }
        return new Step(n, f, rates, poller, process);
    }

    /** One window: returns calls/s, the pollers' CPU share and the process's. */
    private double[] window(int used, int size, int perConnection) throws Exception {
        long poller0 = pollerCpuNanos();
        long process0 = processCpuNanos();
        long t0 = System.nanoTime();
        for (int i = 0; i < used; i++) {
            clients.send(i, "RUN " + size + " " + perConnection);
        }
        long made = 0;
        for (int i = 0; i < used; i++) {
            String[] a = clients.answer(i, ANSWER_MINUTES).split(" ", 5);
            made += Long.parseLong(a[1]);
            if (!a[2].equals("0")) {
                fail("client " + i + ": " + a[2] + " calls of " + sizeName(size) + " failed: " + String.join(" ", a));
            }
        }
        double wall = System.nanoTime() - t0;
        return new double[]{made * 1e9 / wall, (pollerCpuNanos() - poller0) / wall, (processCpuNanos() - process0) / wall};
    }

    private void fail(String why) {
        failed = true;
        System.out.println("rdmarpc-scale: FAILURE: " + why);
    }

    private static String cqs() {
        StringBuilder b = new StringBuilder();
        for (RdmaDeviceContext c : DeviceContexts.all()) {
            b.append(c.deviceName()).append(' ').append(c.completionQueues()).append(" x ").append(c.queuePairsPerCq())
                    .append(" queue pairs");
        }
        return b.toString();
    }

    /** CPU time of the device contexts' completion poller threads, summed. */
    private long pollerCpuNanos() {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("rdmarpc-rdma-poller-")) {
                sum += Math.max(0, threads.getThreadCpuTime(t.threadId()));
            }
        }
        return sum;
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static String sizeName(int size) {
        return size >= MIB ? size / MIB + " MiB" : size + " B";
    }

    private static double mib(long bytes) {
        return bytes / (double) MIB;
    }

    private static void printTable(List<Step> steps) {
        System.out.println("rdmarpc-scale: | connections | RDMA conns / QPs (server) | registered MiB | slab regions |"
                + " heap after GC MiB | native (NMT, non-heap) MiB | NMT Other MiB | RSS MiB | 64 B calls/s | 1 MiB calls/s |"
                + " pollers' CPU 64 B / 1 MiB | server CPU 64 B / 1 MiB |");
        System.out.println("rdmarpc-scale: |---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Step s : steps) {
            ServerFootprint f = s.footprint();
            System.out.printf("rdmarpc-scale: | %d | %d / %d | %.1f | %d | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f | %.0f %% / %.0f %% |"
                            + " %.0f %% / %.0f %% |%n", s.connections(), f.connections(), f.queuePairs(),
                    mib(f.registeredBytes()), f.slabRegions(), mib(f.heapAfterGc()), mib(f.nativeCommitted()),
                    mib(f.nativeOther()), mib(f.rss()), s.callsPerSecond()[0], s.callsPerSecond()[1],
                    s.pollerShare()[0] * 100, s.pollerShare()[1] * 100, s.processShare()[0] * 100,
                    s.processShare()[1] * 100);
        }
        if (steps.size() < 2) {
            return;
        }
        Step first = steps.get(0);
        Step last = steps.get(steps.size() - 1);
        int dn = last.connections() - first.connections();
        ServerFootprint a = first.footprint();
        ServerFootprint b = last.footprint();
        double regPer = (b.registeredBytes() - a.registeredBytes()) / 1024.0 / dn;
        System.out.printf("rdmarpc-scale: per additional connection (%d -> %d): registered %.1f KiB, heap %.1f KiB, "
                        + "native (NMT) %.1f KiB, RSS %.1f KiB%n", first.connections(), last.connections(), regPer,
                (b.heapAfterGc() - a.heapAfterGc()) / 1024.0 / dn, (b.nativeCommitted() - a.nativeCommitted()) / 1024.0 / dn,
                (b.rss() - a.rss()) / 1024.0 / dn);
        System.out.printf("rdmarpc-scale: goal registered <= 64 KiB per additional connection: %.1f KiB, %s%n", regPer,
                regPer <= 64 ? "met" : "NOT met");
        Step eight = steps.stream().filter(s -> s.connections() == 8).findFirst().orElse(null);
        if (eight != null && last.connections() > 8) {
            for (int k = 0; k < SIZES.length; k++) {
                double ratio = last.callsPerSecond()[k] / eight.callsPerSecond()[k];
                System.out.printf("rdmarpc-scale: goal %d connections >= 0.8x the calls/s of 8 at %s: %.2fx, %s%n",
                        last.connections(), sizeName(SIZES[k]), ratio, ratio >= 0.8 ? "met" : "NOT met");
            }
        }
    }
}
