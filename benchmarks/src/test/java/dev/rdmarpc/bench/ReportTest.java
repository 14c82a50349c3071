package dev.rdmarpc.bench;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ratios to grpc-netty and the written results. */
class ReportTest {

    private final CellResult grpc = TestResults.of(Transport.GRPC_NETTY, 64, 1, 200, 5000);
    private final CellResult nat = TestResults.of(Transport.NATIVE, 64, 1, 50, 20000);
    private final CellResult other = TestResults.of(Transport.NATIVE, 64, 16, 80, 90000);

    @Test
    void baselineIsGrpcNettyOfTheSameWorkload() {
        List<CellResult> all = List.of(grpc, nat, other);
        assertSame(grpc, Report.baselineOf(all, nat));
        assertNull(Report.baselineOf(all, other));
        assertEquals(0.25, Report.ratio(nat.percentileUs(50), grpc.percentileUs(50)), 0.01);
        assertEquals(4.0, Report.ratio(nat.callsPerSecond(), grpc.callsPerSecond()), 1e-9);
    }

    @Test
    void eachExecutorModeIsComparedWithGrpcNettyInTheSameMode() throws Exception {
        CellResult grpcDefault = TestResults.of(Transport.GRPC_NETTY, ExecutorMode.DEFAULT, 64, 1, 400, 2500);
        CellResult natDefault = TestResults.of(Transport.NATIVE, ExecutorMode.DEFAULT, 64, 1, 100, 10000);
        List<CellResult> all = List.of(grpc, nat, grpcDefault, natDefault);
        assertSame(grpc, Report.baselineOf(all, nat));
        assertSame(grpcDefault, Report.baselineOf(all, natDefault));
        assertNull(Report.baselineOf(List.of(grpc, natDefault), natDefault));
        assertEquals("native_unary_64B_c1_default.hgrm", Report.hgrmName(natDefault));
        RunConfig cfg = new RunCommandTest().parse("--payload", "64", "--concurrency", "1");
        JsonObject root = JsonParser.parseString(Report.json(cfg, new Report.RunInfo(Instant.EPOCH, Instant.EPOCH, false, "local",
                Map.of(), List.of()), all, List.of())).getAsJsonObject();
        assertEquals("[\"direct\",\"default\"]", root.getAsJsonObject("settings").get("executors").toString());
        JsonObject cell = root.getAsJsonArray("results").get(3).getAsJsonObject();
        assertEquals("default", cell.get("executor").getAsString());
        assertEquals(10000, cell.get("calls").getAsLong());
        assertEquals(4.0, cell.getAsJsonObject("ratio_to_grpc_netty").get("calls_per_s").getAsDouble(), 1e-9);
        String table = Report.table(all, List.of(), false);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("native(tcp)") && l.contains(" default ") && l.contains("4.00")), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("native(tcp)") && l.contains(" direct ") && l.contains("4.00")), table);
    }

    @Test
    void figuresAreDerivedFromTheWindow() {
        assertEquals(20000, nat.callsPerSecond(), 1e-9);
        assertEquals(20000 * 128 / 1e6, nat.megabytesPerSecond(), 1e-9);
        assertEquals(10.0, nat.clientCpuUsPerCall(), 1e-9);
        assertEquals(20.0, nat.serverCpuUsPerCall(), 1e-9);
    }

    @Test
    void jsonReadsBackWithItsFigures() throws Exception {
        RunConfig cfg = new RunCommandTest().parse("--payload", "64", "--concurrency", "1,16");
        String json = Report.json(cfg, new Report.RunInfo(Instant.EPOCH, Instant.EPOCH, true, "local", Map.of(), List.of()),
                List.of(grpc, nat), List.of(new Report.Skipped(Transport.GRPC_COMPAT, "said \"no\"\non two lines")));
        JsonObject root = JsonParser.parseString(json).getAsJsonObject();
        assertTrue(root.get("interrupted").getAsBoolean());
        assertTrue(root.getAsJsonObject("settings").get("rate").isJsonNull());
        JsonObject nativeCell = root.getAsJsonArray("results").get(1).getAsJsonObject();
        assertEquals("native", nativeCell.get("transport").getAsString());
        assertEquals(20000, nativeCell.get("calls").getAsLong());
        assertEquals(20000, nativeCell.get("calls_per_s").getAsDouble());
        assertEquals(0.25, nativeCell.getAsJsonObject("ratio_to_grpc_netty").get("p50_us").getAsDouble(), 0.01);
        assertTrue(nativeCell.get("error").isJsonNull());
        JsonObject skippedCell = root.getAsJsonArray("skipped").get(0).getAsJsonObject();
        assertEquals("said \"no\"\non two lines", skippedCell.get("reason").getAsString());
    }

    @Test
    void figuresAreWholeOrSixDigitsOrNull() {
        assertEquals("12", Report.figure(12.0));
        assertEquals("0.123457", Report.figure(0.123456789));
        assertEquals("0.00000123457", Report.figure(0.00000123456789));
        assertEquals("null", Report.figure(Double.NaN));
        assertEquals("null", Report.figure(Double.POSITIVE_INFINITY));
    }

    @Test
    void writesJsonTableAndHistograms(@TempDir Path dir) throws Exception {
        RunConfig cfg = new RunCommandTest().parse("--payload", "64", "--concurrency", "1,16");
        Report.write(dir, cfg, new Report.RunInfo(Instant.now(), Instant.now(), false, "local", Map.of("pid", "1"), List.of("-Xmx1g")),
                List.of(grpc, nat, other), List.of(new Report.Skipped(Transport.GRPC_COMPAT, "not here")));
        String json = Files.readString(dir.resolve("results.json"));
        for (String key : List.of("\"results\"", "\"transport\": \"native\"", "\"payload\": 64", "\"concurrency\": 16",
                "\"mode\": \"closed\"", "\"p50_us\"", "\"p90_us\"", "\"p99_us\"", "\"p999_us\"", "\"max_us\"", "\"calls_per_s\"",
                "\"mb_per_s\"", "\"client_cpu_us_per_call\"", "\"server_cpu_us_per_call\"", "\"ratio_to_grpc_netty\"",
                "\"skipped\"", "\"reason\": \"not here\"")) {
            assertTrue(json.contains(key), key + " missing from\n" + json);
        }
        assertTrue(Files.readString(dir.resolve("results.txt")).contains("native(tcp)"));
        assertTrue(json.endsWith("}\n"), json);
        assertTrue(Files.readString(dir.resolve(Report.hgrmName(nat))).contains("Percentile"));
        assertEquals("native_unary_64B_c1.hgrm", Report.hgrmName(nat));
    }
}
