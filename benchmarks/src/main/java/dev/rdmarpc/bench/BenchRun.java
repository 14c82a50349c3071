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
            List<Pass> passes = passes(progress);
            TransportWarmup warmup = new TransportWarmup(cfg, stop, progress);
            if (cfg.warmAllFirst() && passes.size() > 1 && !cfg.transportWarmup().isZero()) {
                progress.println("warming every transport before any is measured, so that the order does not decide");
                for (Pass p : passes) {
                    if (stop.isStopped()) {
                        break;
                    }
                    BenchClient client;
                    try {
                        client = connect(ctl, p, dataHost, maxMessage, progress);
                    } catch (BenchException e) {
                        progress.println("warning: " + p.transport() + " (" + p.executor() + " executor) could not be warmed: "
                                + e.getMessage());
                        stopQuietly(ctl);
                        continue;
                    }
                    try {
                        warmup.run(p.transport(), p.executor(), client, cfg.transportWarmup());
                    } finally {
                        client.close();
                        stopQuietly(ctl);
                    }
                }
            }
            int failures = 0;
            int cellIndex = 0;
            int cellsPerMode = cfg.calls().size() * cfg.payloads().size() * cfg.concurrency().size();
            for (Pass p : passes) {
                if (stop.isStopped()) {
                    break;
                }
                Transport t = p.transport();
                ExecutorMode ex = p.executor();
                BenchClient client;
                try {
                    client = connect(ctl, p, dataHost, maxMessage, progress);
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
                    warmup.run(t, ex, client, cfg.transportWarmup());
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
            return failures == 0 ? 0 : BenchException.FAILED;
        }
    }

    /** One transport in one executor mode: what the run connects, warms and measures as a unit. */
    private record Pass(Transport transport, ExecutorMode executor) {
    }

    /** The transports and executor modes to measure, in order; those that cannot run (netty-raw with TLS) are recorded as skipped. */
    private List<Pass> passes(Progress progress) {
        List<Pass> passes = new ArrayList<>();
        for (Transport t : cfg.transports()) {
            if (cfg.tls() && t == Transport.NETTY_RAW) {
                skipped.add(new Report.Skipped(t, "--tls: the raw Netty echo has no TLS"));
                progress.println("skipping " + t + ": it has no TLS");
                continue;
            }
            for (ExecutorMode ex : cfg.executorsOf(t)) {
                passes.add(new Pass(t, ex));
            }
        }
        return passes;
    }

    /**
     * Starts the pass's server and connects its client.
     *
     * @throws BenchException when the server cannot start or the client cannot connect (the server is left to stop)
     */
    private BenchClient connect(ControlClient ctl, Pass p, String dataHost, int maxMessage, Progress progress) {
        progress.status(p.transport() + " (" + p.executor() + " executor): starting its server and connecting");
        int port = ctl.start(p.transport(), p.executor().direct(), cfg.tls());
        return Drivers.connect(p.transport(), new ClientSettings(dataHost, port, maxMessage, p.executor().direct(),
                cfg.connections(), cfg.connectTimeout(), cfg.tls()));
    }

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
