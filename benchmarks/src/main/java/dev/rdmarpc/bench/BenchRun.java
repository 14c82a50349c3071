package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.BenchClient;
import dev.rdmarpc.bench.driver.ClientSettings;
import dev.rdmarpc.bench.driver.Drivers;
import dev.rdmarpc.bench.driver.Workload;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One benchmark run: starts (or reaches) the server process, measures every cell of every
 * transport from this JVM, and writes the outputs. Ctrl-C stops the cell being measured, and what
 * was measured so far is still written.
 */
final class BenchRun {
    /** Protobuf framing a payload may add (tag, length varint) plus slack. */
    static final int MESSAGE_OVERHEAD = 16;

    private final RunConfig cfg;
    private final PrintStream out;
    private final PrintStream err;
    private final StopSignal stop = new StopSignal();
    private final List<CellResult> results = Collections.synchronizedList(new ArrayList<>());
    private final List<Report.Skipped> skipped = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Instant started = Instant.now();
    private volatile String serverLabel = "local";
    private volatile Map<String, String> serverInfo = Map.of();
    private volatile List<String> jvmFlags = List.of();
    private volatile ServerProcess serverProcess;
    private boolean written;

    BenchRun(RunConfig cfg, PrintStream out, PrintStream err) {
        this.cfg = cfg;
        this.out = out;
        this.err = err;
    }

    /** Runs everything; returns the exit code (0 when every cell of every transport was measured). */
    int execute() {
        Thread hook = new Thread(this::onShutdown, "bench-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        int code;
        try {
            BenchException failure = null;
            try (Progress progress = new Progress(err, Progress.isTerminal(), cfg.cellCount())) {
                code = measureAll(progress);
            } catch (BenchException e) {
                failure = e;
                code = e.exitCode();
            }
            if (!results.isEmpty() || !skipped.isEmpty()) {
                writeOutputs();
            }
            if (failure != null && !stop.isStopped()) {
                throw failure;
            }
        } finally {
            ServerProcess sp = serverProcess;
            if (sp != null) {
                sp.close();
            }
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is running and waits for us
            }
        }
        return stop.isStopped() ? 130 : code;
    }

    private int measureAll(Progress progress) {
        jvmFlags = ServerProcess.inheritedJvmFlags();
        ControlClient ctl;
        String dataHost;
        if (cfg.server() == null) {
            progress.status("starting the server JVM");
            List<String> flags = new ArrayList<>(jvmFlags);
            flags.addAll(cfg.serverJvmArgs());
            List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0",
                    "--max-message", String.valueOf(cfg.maxMessage()), "--exit-with-parent"));
            args.addAll(cfg.serverArgs());
            serverProcess = ServerProcess.start(flags, args, cfg.out().resolve("server.log"), cfg.serverTimeout());
            if (stop.isStopped()) {
                return 130;
            }
            dataHost = "127.0.0.1";
            ctl = ControlClient.connect(dataHost, serverProcess.controlPort(), cfg.serverTimeout(), replyTimeout());
            serverLabel = "local (pid " + serverProcess.pid() + ")";
        } else {
            HostPort hp = HostPort.parse(cfg.server());
            dataHost = hp.host();
            ctl = ControlClient.connect(hp.host(), hp.port(), cfg.serverTimeout(), replyTimeout());
            serverLabel = cfg.server();
        }
        try (ctl) {
            Map<String, String> info = ctl.hello();
            serverInfo = new LinkedHashMap<>(info);
            int maxMessage = Integer.parseInt(info.getOrDefault("maxMessage", String.valueOf(cfg.maxMessage())));
            for (int p : cfg.payloads()) {
                if ((long) p + MESSAGE_OVERHEAD > maxMessage) {
                    throw new BenchException(BenchException.BAD_INPUT, "payload " + p + " B (" + Sizes.format(p)
                            + ") does not fit the server's max message size of " + maxMessage + " B ("
                            + Sizes.format(maxMessage) + ") with " + MESSAGE_OVERHEAD + " B of framing; use a smaller --payload"
                            + (cfg.server() == null ? " or a larger --max-message" : " or start the server with a larger --max-message"));
                }
            }
            progress.println("server: " + serverLabel + ", " + info.get("cpus") + " cpus, java " + info.get("java")
                    + "; output: " + cfg.out().toAbsolutePath());
            int failures = 0;
            int cellIndex = 0;
            int cellsPerMode = cfg.calls().size() * cfg.payloads().size() * cfg.concurrency().size();
            for (Transport t : cfg.transports()) {
                if (stop.isStopped()) {
                    break;
                }
                if (cfg.tls() && t == Transport.NETTY_RAW) {
                    skipped.add(new Report.Skipped(t, "--tls: the raw Netty echo has no TLS"));
                    progress.println("skipping " + t + ": it has no TLS");
                    cellIndex += cellsPerMode * cfg.executorsOf(t).size();
                    continue;
                }
                for (ExecutorMode ex : cfg.executorsOf(t)) {
                    if (stop.isStopped()) {
                        break;
                    }
                    progress.status(t + " (" + ex + " executor): starting its server and connecting");
                    BenchClient client;
                    try {
                        int port = ctl.start(t, ex.direct(), cfg.tls());
                        client = Drivers.connect(t, new ClientSettings(dataHost, port, maxMessage, ex.direct(),
                                cfg.connections(), cfg.connectTimeout(), cfg.tls()));
                    } catch (BenchException e) {
                        if (stop.isStopped()) {
                            break;
                        }
                        skipped.add(new Report.Skipped(t, cfg.executors().size() > 1 ? ex + " executor: " + e.getMessage() : e.getMessage()));
                        progress.println("skipping " + t + " (" + ex + " executor): " + e.getMessage());
                        failures++;
                        cellIndex += cellsPerMode;
                        stopQuietly(ctl);
                        continue;
                    }
                    try {
                        warmUp(t, ex, client, progress);
                        for (CallKind kind : cfg.calls()) {
                            for (int payload : cfg.payloads()) {
                                for (int conc : cfg.concurrency()) {
                                    if (stop.isStopped()) {
                                        break;
                                    }
                                    CellSpec spec = new CellSpec(t, ex, new Workload(kind, payload, cfg.streamLength()), conc,
                                            cfg.mode(), cfg.rate(), cfg.warmup(), cfg.duration(), cfg.callsPerCell());
                                    progress.cell(++cellIndex, t + (t == Transport.NATIVE ? "(" + client.negotiated() + ")" : "")
                                            + " " + spec.label());
                                    CellResult r = new CellRunner(spec, client, () -> serverCpu(ctl), stop, progress).run();
                                    results.add(r);
                                    progress.println(Report.line(r));
                                    if (r.error() != null) {
                                        failures++;
                                    }
                                }
                            }
                        }
                    } finally {
                        client.close();
                        stopQuietly(ctl);
                    }
                }
            }
            return failures == 0 ? 0 : BenchException.FAILED;
        }
    }

    /**
     * Gets the transport's code compiled before its first cell: its smallest payload at the highest concurrency until
     * steady, then briefly its largest payload.
     */
    private void warmUp(Transport t, ExecutorMode ex, BenchClient client, Progress progress) {
        if (cfg.transportWarmup().isZero()) {
            return;
        }
        int conc = cfg.concurrency().stream().mapToInt(Integer::intValue).max().orElse(1);
        int payload = cfg.payloads().stream().mapToInt(Integer::intValue).min().orElse(0);
        java.time.Duration each = cfg.transportWarmup().dividedBy(cfg.calls().size());
        for (CallKind kind : cfg.calls()) {
            if (stop.isStopped()) {
                return;
            }
            CellSpec spec = new CellSpec(t, ex, new Workload(kind, payload, cfg.streamLength()), conc, cfg.mode(), cfg.rate(),
                    each, java.time.Duration.ZERO, 0);
            progress.status(t + " JIT warmup: " + spec.label());
            CellRunner runner = new CellRunner(spec, client, () -> -1, stop, progress).untilSteady();
            CellResult r = runner.run();
            if (r.error() != null) {
                progress.println("warning: " + t + " failed during its warmup: " + r.error());
            } else if (!stop.isStopped()) {
                long steady = runner.steadyAfterNanos();
                progress.println(String.format(java.util.Locale.ROOT, "%-12s warmup (%s): %s", t.cliName(), spec.label(),
                        steady < 0 ? String.format(java.util.Locale.ROOT, "not steady after %.1f s (measuring anyway)", each.toMillis() / 1e3)
                                : String.format(java.util.Locale.ROOT, "steady after %.1f s", steady / 1e9)));
            }
            warmUpLargest(t, ex, client, kind, payload, each, progress);
        }
    }

    /**
     * A short run at the largest payload, one call at a time, so that the large-message paths (copies, big buffers,
     * the collector's sizing) are compiled and settled before their cells too, not measured while they warm up.
     */
    private void warmUpLargest(Transport t, ExecutorMode ex, BenchClient client, CallKind kind, int warmedPayload, java.time.Duration each,
                               Progress progress) {
        int largest = cfg.payloads().stream().mapToInt(Integer::intValue).max().orElse(warmedPayload);
        java.time.Duration time = each.dividedBy(4);
        if (time.compareTo(LARGEST_WARMUP) > 0) {
            time = LARGEST_WARMUP;
        }
        if (largest == warmedPayload || time.toMillis() < 300 || stop.isStopped()) {
            return;
        }
        CellSpec spec = new CellSpec(t, ex, new Workload(kind, largest, cfg.streamLength()), 1, cfg.mode(), cfg.rate(),
                time, java.time.Duration.ZERO, 0);
        progress.status(t + " JIT warmup: " + spec.label());
        CellResult r = new CellRunner(spec, client, () -> -1, stop, progress).run();
        if (r.error() != null) {
            progress.println("warning: " + t + " failed during its warmup: " + r.error());
        } else if (!stop.isStopped()) {
            progress.println(String.format(java.util.Locale.ROOT, "%-12s warmup (%s): %.1f s", t.cliName(), spec.label(),
                    time.toMillis() / 1e3));
        }
    }

    /** Longest warmup at the largest payload. */
    private static final java.time.Duration LARGEST_WARMUP = java.time.Duration.ofMillis(1500);

    private java.time.Duration replyTimeout() {
        return cfg.serverTimeout().plus(cfg.connectTimeout()).plusSeconds(30);
    }

    private long serverCpu(ControlClient ctl) {
        try {
            return ctl.cpuNanos();
        } catch (BenchException e) {
            return -1;
        }
    }

    private void stopQuietly(ControlClient ctl) {
        try {
            ctl.stop();
        } catch (BenchException e) {
            if (!stop.isStopped()) {
                err.println("warning: " + e.getMessage());
            }
        }
    }

    /** Writes results.json, results.txt, the .hgrm files and the plot, once; prints the table. */
    private synchronized void writeOutputs() {
        if (written) {
            return;
        }
        written = true;
        List<CellResult> rs;
        List<Report.Skipped> sk;
        synchronized (results) {
            rs = List.copyOf(results);
        }
        synchronized (skipped) {
            sk = List.copyOf(skipped);
        }
        Path dir = cfg.out();
        try {
            Report.write(dir, cfg, new Report.RunInfo(started, Instant.now(), stop.isStopped(), serverLabel, serverInfo, jvmFlags), rs, sk);
        } catch (IOException e) {
            err.println("rdmarpc-bench: cannot write the results into " + dir + ": " + e.getMessage());
            return;
        }
        out.println();
        out.print(Report.table(rs, sk, cfg.tls()));
        Path png = null;
        if (cfg.plot()) {
            try {
                png = Plotter.write(dir, rs);
            } catch (IOException | RuntimeException | LinkageError e) {
                err.println("warning: the plot could not be drawn: " + e);
            }
        }
        out.println();
        out.println("results: " + dir.resolve("results.json").toAbsolutePath());
        if (png != null) {
            out.println("plot:    " + png.toAbsolutePath() + " (and latency.svg)");
        }
        if (stop.isStopped()) {
            out.println("stopped early: the results above are what was measured until then");
        }
        out.flush();
    }

    /** Ctrl-C: stop the cell being measured, let the run write what it has, then end the server JVM. */
    private void onShutdown() {
        stop.stop();
        try {
            if (!finished.await(20, TimeUnit.SECONDS)) {
                err.println("rdmarpc-bench: the run did not stop within 20 s; writing what was measured");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!results.isEmpty() || !skipped.isEmpty()) {
            writeOutputs();
        }
        ServerProcess sp = serverProcess;
        if (sp != null) {
            sp.close();
        }
    }
}
