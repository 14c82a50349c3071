package dev.rdmarpc.bench;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
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

    /** The grpc-netty result of the same workload, load and mode, or null. */
    static CellResult baselineOf(List<CellResult> all, CellResult r) {
        for (CellResult b : all) {
            if (b.spec().transport() == BASELINE && b.spec().workload().equals(r.spec().workload())
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

    /** File name of a cell's histogram. */
    static String hgrmName(CellResult r) {
        CellSpec s = r.spec();
        return s.transport().cliName() + "_" + s.workload().kind().cliName() + "_" + s.workload().payloadSize() + "B_c"
                + s.concurrency() + (s.mode() == LoadMode.OPEN ? "_open" + (long) s.rate() : "") + ".hgrm";
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
        Files.writeString(dir.resolve("results.txt"), table(results, skipped), StandardCharsets.UTF_8);
    }

    static String json(RunConfig cfg, RunInfo info, List<CellResult> results, List<Skipped> skipped) {
        Json j = new Json().beginObject();
        j.field("tool", "rdmarpc-bench").field("format", 1);
        j.field("started", info.started().toString()).field("finished", info.finished().toString());
        j.field("interrupted", info.interrupted());
        j.key("units").beginObject()
                .field("latency", "microseconds, from the call's send time (open loop: its intended send time)")
                .field("mb_per_s", "payload bytes of both directions per second / 10^6")
                .field("cpu_us_per_call", "process CPU time (user+system, from the OS) per completed call")
                .field("ratio_to_grpc_netty", "this figure divided by grpc-netty's for the same workload in the same run")
                .endObject();
        j.key("host").beginObject()
                .field("client_cpus", Runtime.getRuntime().availableProcessors())
                .field("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"))
                .field("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"))
                .field("server", info.server());
        for (Map.Entry<String, String> e : info.serverInfo().entrySet()) {
            j.field("server_" + e.getKey(), e.getValue());
        }
        j.key("jvm_flags").beginArray();
        for (String f : info.jvmFlags()) {
            j.value(f);
        }
        j.endArray().endObject();
        j.key("settings").beginObject()
                .field("mode", cfg.mode().cliName())
                .field("rate", cfg.mode() == LoadMode.OPEN ? cfg.rate() : Double.NaN)
                .field("warmup_s", cfg.warmup().toMillis() / 1000.0)
                .field("duration_s", cfg.duration().toMillis() / 1000.0)
                .field("calls_per_cell", cfg.callsPerCell() > 0 ? cfg.callsPerCell() : Double.NaN)
                .field("executor", cfg.directExecutor() ? "direct" : "default")
                .field("connections", cfg.connections())
                .field("stream_length", cfg.streamLength())
                .field("max_message", cfg.maxMessage())
                .endObject();
        j.key("results").beginArray();
        for (CellResult r : results) {
            CellSpec s = r.spec();
            j.beginObject()
                    .field("transport", s.transport().cliName())
                    .field("negotiated", r.negotiated())
                    .field("call", s.workload().kind().cliName())
                    .field("payload", s.workload().payloadSize())
                    .field("concurrency", s.concurrency())
                    .field("mode", s.mode().cliName());
            if (s.mode() == LoadMode.OPEN) {
                j.field("rate", s.rate());
            }
            if (s.workload().kind() == CallKind.SERVER_STREAM) {
                j.field("stream_length", s.workload().streamLength());
            }
            j.field("calls", r.calls()).field("errors", r.errors()).field("seconds", r.seconds());
            for (Metric m : METRICS) {
                j.field(m.key(), m.value().applyAsDouble(r));
            }
            j.field("mean_us", r.meanUs())
                    .field("client_cpu_cores", r.clientCores())
                    .field("server_cpu_cores", r.serverCores())
                    .field("partial", r.partial())
                    .field("error", r.error())
                    .field("hgrm", r.histogram().getTotalCount() > 0 ? hgrmName(r) : null);
            CellResult base = baselineOf(results, r);
            j.key("ratio_to_grpc_netty");
            if (base == null) {
                j.nullValue();
            } else {
                j.beginObject();
                for (Metric m : METRICS) {
                    j.field(m.key(), ratio(m.value().applyAsDouble(r), m.value().applyAsDouble(base)));
                }
                j.endObject();
            }
            j.endObject();
        }
        j.endArray();
        j.key("skipped").beginArray();
        for (Skipped s : skipped) {
            j.beginObject().field("transport", s.transport().cliName()).field("reason", s.reason()).endObject();
        }
        j.endArray();
        return j.endObject().toString();
    }

    /** The results as a text table, grouped by workload, with ratios to grpc-netty. */
    static String table(List<CellResult> results, List<Skipped> skipped) {
        List<CellResult> rows = new ArrayList<>(results);
        rows.sort(Comparator.<CellResult>comparingInt(r -> r.spec().workload().kind().ordinal())
                .thenComparingInt(r -> r.spec().workload().payloadSize())
                .thenComparingInt(r -> r.spec().concurrency())
                .thenComparingDouble(r -> r.spec().rate()));
        StringBuilder sb = new StringBuilder();
        String head = String.format(Locale.ROOT, "%-22s %-13s %8s %5s %9s %9s %9s %9s %9s %10s %8s %8s %8s  %6s %6s %6s %6s%n",
                "transport", "call", "payload", "conc", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us",
                "calls/s", "MB/s", "cli us", "srv us", "p50 x", "p99 x", "cps x", "MBps x");
        sb.append(head);
        Object group = null;
        for (CellResult r : rows) {
            CellSpec s = r.spec();
            Object g = List.of(s.workload(), s.concurrency(), s.rate());
            if (group != null && !Objects.equals(group, g)) {
                sb.append('\n');
            }
            group = g;
            CellResult base = baselineOf(results, r);
            String name = s.transport().cliName() + (s.transport() == Transport.NATIVE ? "(" + r.negotiated() + ")" : "");
            sb.append(String.format(Locale.ROOT, "%-22s %-13s %8s %5d %9s %9s %9s %9s %9s %10s %8s %8s %8s  %6s %6s %6s %6s",
                    name, s.workload().kind().cliName() + (s.mode() == LoadMode.OPEN ? "@" + (long) s.rate() : ""),
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
                .append("\"x\" columns = ratio to grpc-netty in this run (p50/p99: lower is better; calls/s, MB/s: higher is better)\n");
        for (Skipped s : skipped) {
            sb.append("skipped ").append(s.transport().cliName()).append(": ").append(s.reason()).append('\n');
        }
        return sb.toString();
    }

    /** One line about a finished cell, for the terminal. */
    static String line(CellResult r) {
        String s = String.format(Locale.ROOT, "%-12s %-24s p50 %s us  p99 %s us  max %s us  %s calls/s  %s MB/s  cpu/call cli %s us srv %s us",
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
