package dev.rdmarpc.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Rounds of runs compared cell by cell: in each round every cell's figures are divided by the baseline transport's for
 * the same workload and executor mode in that round, and each cell gets the median of its per-round ratios. A round is
 * a directory with a run's {@code results.json}, or whose subdirectories hold one each (the transports run one at a
 * time in their own JVMs). Ratios within a round cancel what the machine did between rounds.
 */
final class RoundComparison {
    /** A workload in one executor mode: what a ratio compares. */
    record Cell(String transport, String executor, String call, long payload, int concurrency) {
        /** The same workload and mode for {@code other}. */
        Cell of(String other) {
            return new Cell(other, executor, call, payload, concurrency);
        }
    }

    /** One cell's figures in one round. */
    record Figures(double callsPerSecond, double clientCpuUs, double serverCpuUs) {
        double cpuUs() {
            return clientCpuUs + serverCpuUs;
        }
    }

    /** One cell against the baseline: its ratio in each round that measured both, in round order. */
    record Ratios(Cell cell, double[] callsPerSecond, double[] cpu, double[] serverCpu, double[] clientCpu) {
        int rounds() {
            return callsPerSecond.length;
        }
    }

    private RoundComparison() {
    }

    /**
     * Reads each round's results; a round without any {@code results.json} is bad input.
     *
     * @throws BenchException when a round has no results or a file cannot be read as results
     */
    static List<Map<Cell, Figures>> load(List<Path> rounds) {
        List<Map<Cell, Figures>> loaded = new ArrayList<>();
        for (Path round : rounds) {
            Map<Cell, Figures> cells = new LinkedHashMap<>();
            List<Path> files = resultsIn(round);
            if (files.isEmpty()) {
                throw new BenchException(BenchException.BAD_INPUT, round + " holds no results.json, nor do its subdirectories");
            }
            for (Path f : files) {
                readInto(f, cells);
            }
            loaded.add(cells);
        }
        return loaded;
    }

    /** Every cell but the baseline's, in the order first seen, with its ratios over the rounds that measured it. */
    static List<Ratios> compare(List<Map<Cell, Figures>> rounds, String baseline) {
        Map<Cell, List<double[]>> byCell = new LinkedHashMap<>();
        for (Map<Cell, Figures> round : rounds) {
            for (Map.Entry<Cell, Figures> e : round.entrySet()) {
                Cell cell = e.getKey();
                Figures base = round.get(cell.of(baseline));
                if (cell.transport().equals(baseline) || base == null) {
                    continue;
                }
                Figures x = e.getValue();
                byCell.computeIfAbsent(cell, c -> new ArrayList<>()).add(new double[] {
                    x.callsPerSecond() / base.callsPerSecond(), x.cpuUs() / base.cpuUs(),
                    x.serverCpuUs() / base.serverCpuUs(), x.clientCpuUs() / base.clientCpuUs()});
            }
        }
        List<Ratios> out = new ArrayList<>();
        for (Map.Entry<Cell, List<double[]>> e : byCell.entrySet()) {
            List<double[]> r = e.getValue();
            out.add(new Ratios(e.getKey(), column(r, 0), column(r, 1), column(r, 2), column(r, 3)));
        }
        return out;
    }

    /** The median: the middle value, or the mean of the two middle ones. */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static double[] column(List<double[]> rows, int i) {
        return rows.stream().mapToDouble(r -> r[i]).toArray();
    }

    private static List<Path> resultsIn(Path round) {
        Path own = round.resolve("results.json");
        if (Files.isRegularFile(own)) {
            return List.of(own);
        }
        if (!Files.isDirectory(round)) {
            return List.of();
        }
        try (Stream<Path> children = Files.list(round)) {
            return children.map(c -> c.resolve("results.json")).filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            throw new BenchException(BenchException.BAD_INPUT, "cannot list " + round + ": " + e.getMessage());
        }
    }

    private static void readInto(Path file, Map<Cell, Figures> cells) {
        try {
            JsonObject root = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
            for (JsonElement el : root.getAsJsonArray("results")) {
                JsonObject r = el.getAsJsonObject();
                double cps = number(r, "calls_per_s");
                if (Double.isNaN(cps) || cps <= 0) {
                    continue; // a cell that failed or made no call has nothing to compare
                }
                Cell cell = new Cell(r.get("transport").getAsString(), r.get("executor").getAsString(),
                        r.get("call").getAsString(), r.get("payload").getAsLong(), r.get("concurrency").getAsInt());
                cells.put(cell, new Figures(cps, number(r, "client_cpu_us_per_call"), number(r, "server_cpu_us_per_call")));
            }
        } catch (IOException | RuntimeException e) {
            throw new BenchException(BenchException.BAD_INPUT, "cannot read " + file + " as results: " + e.getMessage());
        }
    }

    private static double number(JsonObject o, String name) {
        JsonElement e = o.get(name);
        return e == null || e.isJsonNull() ? Double.NaN : e.getAsDouble();
    }
}
