package dev.rdmarpc.bench;

import com.google.gson.stream.JsonWriter;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Turns cell results into the run's outputs: results.json, results.txt (the table), one .hgrm file
 * per cell, and the terminal table, each figure also as a ratio to grpc-netty measured in the same run.
 */
final class Report {
    /** The transport every ratio is taken against. */
    static final Transport BASELINE = Transport.GRPC_NETTY;

    /** A transport the run could not measure, and why. */
    record Skipped(Transport transport, String reason) {
    }

    /** Facts about the run for the JSON header. */
    record RunInfo(Instant started, Instant finished, boolean interrupted, String server, Map<String, String> serverInfo,
                   List<String> jvmFlags) {
    }

    private record Metric(String key, ToDoubleFunction<CellResult> value) {
    }

    private static final List<Metric> METRICS = List.of(
            new Metric("p50_us", r -> r.percentileUs(50)),
            new Metric("p90_us", r -> r.percentileUs(90)),
            new Metric("p99_us", r -> r.percentileUs(99)),
            new Metric("p999_us", r -> r.percentileUs(99.9)),
            new Metric("max_us", CellResult::maxUs),
            new Metric("calls_per_s", CellResult::callsPerSecond),
            new Metric("mb_per_s", CellResult::megabytesPerSecond),
            new Metric("client_cpu_us_per_call", CellResult::clientCpuUsPerCall),
            new Metric("server_cpu_us_per_call", CellResult::serverCpuUsPerCall));

    private Report() {
    }

    /** The grpc-netty result of the same workload, load, mode and executor mode, or null. */
    static CellResult baselineOf(List<CellResult> all, CellResult r) {
        for (CellResult b : all) {
            if (b.spec().transport() == BASELINE && b.spec().executor() == r.spec().executor()
                    && b.spec().workload().equals(r.spec().workload())
                    && b.spec().concurrency() == r.spec().concurrency() && b.spec().mode() == r.spec().mode()
                    && b.spec().rate() == r.spec().rate() && b.calls() > 0) {
                return b;
            }
        }
        return null;
    }

    static double ratio(double value, double base) {
        return base == 0 || Double.isNaN(base) || Double.isNaN(value) ? Double.NaN : value / base;
    }

    /** File name of a cell's histogram ("_default" marks the default executor mode). */
    static String hgrmName(CellResult r) {
        CellSpec s = r.spec();
        return s.transport().cliName() + "_" + s.workload().kind().cliName() + "_" + s.workload().payloadSize() + "B_c"
                + s.concurrency() + (s.mode() == LoadMode.OPEN ? "_open" + (long) s.rate() : "")
                + (s.executor().direct() ? "" : "_" + s.executor().cliName()) + ".hgrm";
    }

    /** Writes results.json, results.txt and the .hgrm files into {@code dir}. */
    static void write(Path dir, RunConfig cfg, RunInfo info, List<CellResult> results, List<Skipped> skipped) throws IOException {
        Files.createDirectories(dir);
        for (CellResult r : results) {
            try (PrintStream ps = new PrintStream(Files.newOutputStream(dir.resolve(hgrmName(r))), false, StandardCharsets.UTF_8)) {
                Histogram h = r.histogram();
                if (h.getTotalCount() > 0) {
                    h.outputPercentileDistribution(ps, 1000.0);
                }
            }
        }
        Files.writeString(dir.resolve("results.json"), json(cfg, info, results, skipped), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.txt"), table(results, skipped, cfg.tls()), StandardCharsets.UTF_8);
    }

    /** results.json: the run's facts and settings, every cell's figures and the transports skipped. */
    static String json(RunConfig cfg, RunInfo info, List<CellResult> results, List<Skipped> skipped) throws IOException {
        StringWriter out = new StringWriter();
        JsonWriter j = new JsonWriter(out);
        j.setIndent("  ");
        j.beginObject();
        j.name("tool").value("rdmarpc-bench").name("format").value(1);
        j.name("started").value(info.started().toString()).name("finished").value(info.finished().toString());
        j.name("interrupted").value(info.interrupted());
        j.name("units").beginObject()
                .name("latency").value("microseconds, from the call's send time (open loop: its intended send time)")
                .name("mb_per_s").value("payload bytes of both directions per second / 10^6")
                .name("cpu_us_per_call").value("process CPU time (user+system, from the OS) per completed call")
                .name("ratio_to_grpc_netty").value("this figure divided by grpc-netty's for the same workload and executor mode in the same run")
                .endObject();
        j.name("host").beginObject()
                .name("client_cpus").value(Runtime.getRuntime().availableProcessors())
                .name("os").value(System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"))
                .name("java").value(System.getProperty("java.vm.name") + " " + System.getProperty("java.version"))
                .name("server").value(info.server());
        for (Map.Entry<String, String> e : info.serverInfo().entrySet()) {
            j.name("server_" + e.getKey()).value(e.getValue());
        }
        j.name("jvm_flags").beginArray();
        for (String f : info.jvmFlags()) {
            j.value(f);
        }
        j.endArray().endObject();
        j.name("settings").beginObject()
                .name("mode").value(cfg.mode().cliName())
                .name("rate").jsonValue(figure(cfg.mode() == LoadMode.OPEN ? cfg.rate() : Double.NaN))
                .name("warmup_s").jsonValue(figure(cfg.warmup().toMillis() / 1000.0))
                .name("duration_s").jsonValue(figure(cfg.duration().toMillis() / 1000.0))
                .name("calls_per_cell").jsonValue(figure(cfg.callsPerCell() > 0 ? cfg.callsPerCell() : Double.NaN))
                .name("executors").beginArray();
        for (ExecutorMode m : cfg.executors()) {
            j.value(m.cliName());
        }
        j.endArray()
                .name("tls").value(cfg.tls())
                .name("connections").value(cfg.connections())
                .name("stream_length").value(cfg.streamLength())
                .name("max_message").value(cfg.maxMessage())
                .endObject();
        j.name("results").beginArray();
        for (CellResult r : results) {
            CellSpec s = r.spec();
            j.beginObject()
                    .name("transport").value(s.transport().cliName())
                    .name("executor").value(s.executor().cliName())
                    .name("negotiated").value(r.negotiated())
                    .name("call").value(s.workload().kind().cliName())
                    .name("payload").value(s.workload().payloadSize())
                    .name("concurrency").value(s.concurrency())
                    .name("mode").value(s.mode().cliName());
            if (s.mode() == LoadMode.OPEN) {
                j.name("rate").jsonValue(figure(s.rate()));
            }
            if (s.workload().kind() == CallKind.SERVER_STREAM) {
                j.name("stream_length").value(s.workload().streamLength());
            }
            j.name("calls").value(r.calls()).name("errors").value(r.errors()).name("seconds").jsonValue(figure(r.seconds()));
            for (Metric m : METRICS) {
                j.name(m.key()).jsonValue(figure(m.value().applyAsDouble(r)));
            }
            j.name("mean_us").jsonValue(figure(r.meanUs()))
                    .name("client_cpu_cores").jsonValue(figure(r.clientCores()))
                    .name("server_cpu_cores").jsonValue(figure(r.serverCores()))
                    .name("partial").value(r.partial())
                    .name("error").value(r.error())
                    .name("hgrm").value(r.histogram().getTotalCount() > 0 ? hgrmName(r) : null);
            CellResult base = baselineOf(results, r);
            j.name("ratio_to_grpc_netty");
            if (base == null) {
                j.nullValue();
            } else {
                j.beginObject();
                for (Metric m : METRICS) {
                    j.name(m.key()).jsonValue(figure(ratio(m.value().applyAsDouble(r), m.value().applyAsDouble(base))));
                }
                j.endObject();
            }
            j.endObject();
        }
        j.endArray();
        j.name("skipped").beginArray();
        for (Skipped s : skipped) {
            j.beginObject().name("transport").value(s.transport().cliName()).name("reason").value(s.reason()).endObject();
        }
        j.endArray().endObject().close();
        return out.append('\n').toString();
    }

    /** A figure as JSON: null when not a number, whole numbers without a fraction, others to six significant digits. */
    static String figure(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "null";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    /** The results as a text table, grouped by workload, with ratios to grpc-netty. */
    static String table(List<CellResult> results, List<Skipped> skipped, boolean tls) {
        List<CellResult> rows = new ArrayList<>(results);
        rows.sort(Comparator.<CellResult>comparingInt(r -> r.spec().workload().kind().ordinal())
                .thenComparingInt(r -> r.spec().workload().payloadSize())
                .thenComparingInt(r -> r.spec().concurrency())
                .thenComparingDouble(r -> r.spec().rate())
                .thenComparingInt(r -> r.spec().executor().ordinal()));
        StringBuilder sb = new StringBuilder();
        sb.append(tls ? "TLS: on (every transport that can; netty-raw skipped; native-rdma unencrypted after a TLS handshake)\n"
                : "TLS: off (plaintext)\n");
        String head = String.format(Locale.ROOT, "%-22s %-8s %-13s %8s %5s %9s %9s %9s %9s %9s %10s %8s %8s %8s  %6s %6s %6s %6s%n",
                "transport", "executor", "call", "payload", "conc", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us",
                "calls/s", "MB/s", "cli us", "srv us", "p50 x", "p99 x", "cps x", "MBps x");
        sb.append(head);
        Object group = null;
        for (CellResult r : rows) {
            CellSpec s = r.spec();
            Object g = List.of(s.workload(), s.concurrency(), s.rate(), s.executor());
            if (group != null && !Objects.equals(group, g)) {
                sb.append('\n');
            }
            group = g;
            CellResult base = baselineOf(results, r);
            String name = s.transport().cliName() + (s.transport() == Transport.NATIVE ? "(" + r.negotiated() + ")" : "");
            sb.append(String.format(Locale.ROOT, "%-22s %-8s %-13s %8s %5d %9s %9s %9s %9s %9s %10s %8s %8s %8s  %6s %6s %6s %6s",
                    name, s.executor().cliName(), s.workload().kind().cliName() + (s.mode() == LoadMode.OPEN ? "@" + (long) s.rate() : ""),
                    Sizes.format(s.workload().payloadSize()), s.concurrency(),
                    num(r.percentileUs(50)), num(r.percentileUs(90)), num(r.percentileUs(99)), num(r.percentileUs(99.9)),
                    num(r.maxUs()), num(r.callsPerSecond()), num(r.megabytesPerSecond()),
                    num(r.clientCpuUsPerCall()), num(r.serverCpuUsPerCall()),
                    x(base, r, rr -> rr.percentileUs(50)), x(base, r, rr -> rr.percentileUs(99)),
                    x(base, r, CellResult::callsPerSecond), x(base, r, CellResult::megabytesPerSecond)));
            if (r.partial()) {
                sb.append("  (partial)");
            }
            if (r.error() != null) {
                sb.append("  ERROR: ").append(r.error());
            }
            sb.append('\n');
        }
        sb.append("\nlatency in microseconds; cli/srv us = CPU microseconds per call of the client/server JVM;\n")
                .append("executor: direct = handlers and callbacks on the I/O threads, default = each framework's default executor\n")
                .append("\"x\" columns = ratio to grpc-netty with the same executor in this run (p50/p99: lower is better; calls/s, MB/s: higher is better)\n");
        for (Skipped s : skipped) {
            sb.append("skipped ").append(s.transport().cliName()).append(": ").append(s.reason()).append('\n');
        }
        return sb.toString();
    }

    /** One line about a finished cell, for the terminal. */
    static String line(CellResult r) {
        String s = String.format(Locale.ROOT, "%-12s %-32s p50 %s us  p99 %s us  max %s us  %s calls/s  %s MB/s  cpu/call cli %s us srv %s us",
                r.spec().transport().cliName() + (r.spec().transport() == Transport.NATIVE ? "(" + r.negotiated() + ")" : ""),
                r.spec().label(), num(r.percentileUs(50)), num(r.percentileUs(99)), num(r.maxUs()), num(r.callsPerSecond()),
                num(r.megabytesPerSecond()), num(r.clientCpuUsPerCall()), num(r.serverCpuUsPerCall()));
        if (r.error() != null) {
            s += "  ERROR: " + r.error() + " (" + r.errors() + " failed calls)";
        }
        return s;
    }

    private static String x(CellResult base, CellResult r, ToDoubleFunction<CellResult> f) {
        if (base == null) {
            return "-";
        }
        double v = ratio(f.applyAsDouble(r), f.applyAsDouble(base));
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
    }

    /** A figure with about three significant digits. */
    static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        if (a >= 100_000) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
