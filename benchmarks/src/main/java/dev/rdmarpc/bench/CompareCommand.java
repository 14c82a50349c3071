package dev.rdmarpc.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/** The {@code compare} subcommand: medians of per-round ratios to a baseline transport over rounds of runs. */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = "Compares rounds of runs: in each round every cell's calls/s and CPU per call are divided by the "
                + "baseline's for the same workload and executor mode in that round; prints each round's ratio and their "
                + "median. A ROUND is a run's --out directory, or a directory whose subdirectories are runs (one transport "
                + "each, run alone; benchmarks/rounds.sh makes them).")
public final class CompareCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--baseline", paramLabel = "NAME", defaultValue = "grpc-netty",
            description = "The transport every other is divided by. Default: ${DEFAULT-VALUE}.")
    String baseline;

    @Parameters(arity = "1..*", paramLabel = "ROUND", description = "One directory per round.")
    List<Path> rounds;

    @Override
    public Integer call() {
        List<RoundComparison.Ratios> all = RoundComparison.compare(RoundComparison.load(rounds), baseline);
        PrintWriter out = spec.commandLine().getOut();
        if (all.isEmpty()) {
            throw new BenchException(BenchException.BAD_INPUT, "no cell of another transport has a " + baseline
                    + " cell of the same workload and executor in the same round");
        }
        out.printf(Locale.ROOT, "%d rounds; each figure ÷ %s's in the same round (calls/s: higher is better; CPU per call,"
                + " client + server, and each side's: lower is better), median after the arrow%n", rounds.size(), baseline);
        for (RoundComparison.Ratios r : all) {
            RoundComparison.Cell c = r.cell();
            out.printf(Locale.ROOT, "%-24s %-7s %-13s %6s c=%-4d calls/s %s -> %.2f   CPU %s -> %.2f   server %.2f   client %.2f%s%n",
                    c.transport(), c.executor(), c.call(), Sizes.format(c.payload()), c.concurrency(),
                    list(r.callsPerSecond()), RoundComparison.median(r.callsPerSecond()), list(r.cpu()),
                    RoundComparison.median(r.cpu()), RoundComparison.median(r.serverCpu()),
                    RoundComparison.median(r.clientCpu()),
                    r.rounds() < rounds.size() ? "   (" + r.rounds() + " of " + rounds.size() + " rounds)" : "");
        }
        out.flush();
        return 0;
    }

    private static String list(double[] values) {
        return Arrays.stream(values).mapToObj(v -> String.format(Locale.ROOT, "%.2f", v)).collect(Collectors.joining(" "));
    }
}
