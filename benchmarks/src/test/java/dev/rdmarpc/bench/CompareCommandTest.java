package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code compare} subcommand over rounds laid out as one run each or as one run per transport. */
class CompareCommandTest {

    @TempDir
    Path dir;

    @Test
    void eachRoundIsDividedByItsOwnBaselineAndTheRatiosMedianed() throws Exception {
        // round 1: one run of both transports; rounds 2 and 3: each transport alone, in a subdirectory of its own
        write(dir.resolve("r1"), cell("grpc-netty", 100_000, 10, 10), cell("native-tcp", 150_000, 5, 5));
        write(dir.resolve("r2/grpc-netty"), cell("grpc-netty", 50_000, 20, 20));
        write(dir.resolve("r2/native-tcp"), cell("native-tcp", 100_000, 10, 10));
        write(dir.resolve("r3/native-tcp"), cell("native-tcp", 120_000, 8, 12));
        write(dir.resolve("r3/grpc-netty"), cell("grpc-netty", 100_000, 10, 10));

        String out = run(0, "compare", dir.resolve("r1").toString(), dir.resolve("r2").toString(), dir.resolve("r3").toString());

        List<RoundComparison.Ratios> ratios = RoundComparison.compare(
                RoundComparison.load(List.of(dir.resolve("r1"), dir.resolve("r2"), dir.resolve("r3"))), "grpc-netty");
        assertEquals(1, ratios.size(), "the baseline is not compared with itself");
        RoundComparison.Ratios r = ratios.get(0);
        assertEquals(List.of(1.5, 2.0, 1.2), boxed(r.callsPerSecond()), "in round order");
        assertEquals(1.5, RoundComparison.median(r.callsPerSecond()), 1e-9);
        assertEquals(0.5, RoundComparison.median(r.cpu()), 1e-9);
        assertEquals(0.8, r.clientCpu()[2], 1e-9);
        assertEquals(1.2, r.serverCpu()[2], 1e-9);
        assertTrue(out.contains("native-tcp") && out.contains("calls/s 1.50 2.00 1.20 -> 1.50"), out);
        assertTrue(out.contains("CPU 0.50 0.50 1.00 -> 0.50"), out);
    }

    @Test
    void aCellMissingFromARoundIsComparedOverTheRoundsThatHaveIt() throws Exception {
        write(dir.resolve("r1"), cell("grpc-netty", 100, 10, 10), cell("netty-raw", 200, 5, 5));
        write(dir.resolve("r2"), cell("grpc-netty", 100, 10, 10), cell("netty-raw", 300, 5, 5));
        write(dir.resolve("r3"), cell("netty-raw", 400, 5, 5)); // its baseline failed this round

        String out = run(0, "compare", dir.resolve("r1").toString(), dir.resolve("r2").toString(), dir.resolve("r3").toString());

        assertTrue(out.contains("calls/s 2.00 3.00 -> 2.50") && out.contains("(2 of 3 rounds)"), out);
    }

    @Test
    void aRoundWithoutResultsIsBadInput() throws Exception {
        write(dir.resolve("r1"), cell("grpc-netty", 100, 10, 10), cell("netty-raw", 200, 5, 5));
        Files.createDirectories(dir.resolve("empty"));
        String err = run(BenchException.BAD_INPUT, "compare", dir.resolve("r1").toString(), dir.resolve("empty").toString());
        assertTrue(err.contains("holds no results.json"), err);
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertEquals(2.5, RoundComparison.median(new double[] {4, 1, 3, 2}), 1e-9);
        assertEquals(3, RoundComparison.median(new double[] {5, 1, 3}), 1e-9);
    }

    /** Runs the command line, checks its exit code, and returns what it printed: its output on 0, else its errors. */
    private static String run(int expectedCode, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = BenchMain.commandLine(new RunCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        assertEquals(expectedCode, cl.execute(args), err.toString());
        return expectedCode == 0 ? out.toString() : err.toString();
    }

    private static List<Double> boxed(double[] values) {
        return java.util.Arrays.stream(values).boxed().toList();
    }

    /** One 64 B c=64 direct unary cell as results.json writes it. */
    private static Map<String, Object> cell(String transport, double callsPerSecond, double clientCpu, double serverCpu) {
        return Map.of("transport", transport, "cps", callsPerSecond, "cli", clientCpu, "srv", serverCpu);
    }

    @SafeVarargs
    private static void write(Path runDir, Map<String, Object>... cells) throws Exception {
        Files.createDirectories(runDir);
        StringBuilder json = new StringBuilder("{\"tool\": \"rdmarpc-bench\", \"format\": 1, \"results\": [");
        for (int i = 0; i < cells.length; i++) {
            Map<String, Object> c = cells[i];
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"transport\": \"%s\", \"executor\": \"direct\", \"call\": \"unary\", \"payload\": 64,"
                            + " \"concurrency\": 64, \"calls_per_s\": %s, \"client_cpu_us_per_call\": %s,"
                            + " \"server_cpu_us_per_call\": %s}",
                    c.get("transport"), c.get("cps"), c.get("cli"), c.get("srv")));
        }
        Files.writeString(runDir.resolve("results.json"), json.append("]}").toString());
    }
}
