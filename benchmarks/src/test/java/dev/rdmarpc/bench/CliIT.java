package dev.rdmarpc.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The packaged CLI as real processes on 127.0.0.1: a quick run and its outputs, a remote server,
 * and every kind of bad input ending with a clear message and a non-zero exit, never a hang.
 */
class CliIT {
    private static final Duration LIMIT = Duration.ofSeconds(120);
    /** --duration of a run measuring a number of calls: only ends a hung cell. */
    private static final String CALLS_BOUND = "60s";

    @Test
    void quickRunWritesEveryOutput(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("quick");
        long start = System.nanoTime();
        BenchProcess p = BenchProcess.run(LIMIT, "--quick", "--out", out.toString());
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals(0, p.exitCode(), p.both());
        System.out.printf("quick run (default transports) took %.1f s%n", seconds);
        String json = Files.readString(out.resolve("results.json"));
        assertEquals(16, count(json, "\"transport\": \""), json);
        assertTrue(json.contains("\"ratio_to_grpc_netty\": {"), json);
        assertFalse(json.contains("\"error\": \""), json);
        try (Stream<Path> files = Files.list(out)) {
            assertEquals(16, files.filter(f -> f.toString().endsWith(".hgrm")).count());
        }
        assertNotNull(ImageIO.read(out.resolve("latency.png").toFile()));
        assertTrue(Files.readString(out.resolve("latency.svg")).contains("<svg"));
        assertTrue(p.out().contains("p50 us") && p.out().contains("latency.png"), p.both());
    }

    @Test
    void drivesARemoteServerProcess(@TempDir Path dir) throws Exception {
        try (BenchProcess server = BenchProcess.start("server", "--host", "127.0.0.1", "--port", "0")) {
            assertTrue(server.awaitOutput(l -> l.startsWith(ControlProtocol.READY_PREFIX), Duration.ofSeconds(60)), server.both());
            Matcher m = Pattern.compile("control=(\\d+)").matcher(server.out());
            assertTrue(m.find(), server.both());
            String target = "127.0.0.1:" + m.group(1);
            BenchProcess p = BenchProcess.run(LIMIT, "--server", target, "--transports", "native-tcp,netty-raw",
                    "--payload", "64", "--concurrency", "2", "--transport-warmup", "0.2s", "--warmup", "0.2s",
                    "--calls", "100", "--duration", CALLS_BOUND, "--no-plot", "--out", dir.toString());
            assertEquals(0, p.exitCode(), p.both());
            String json = Files.readString(dir.resolve("results.json"));
            assertTrue(json.contains("\"server\": \"" + target + "\""), json);
            // native-tcp in both executor modes (the default), netty-raw (no executor) once
            assertEquals(3, count(json, "\"transport\": \""), json);
            assertEquals(2, count(json, "\"executor\": \"direct\""), json);
            assertEquals(1, count(json, "\"executor\": \"default\""), json);
            assertEquals(3, count(json, "\"calls\": 100,"), json);
            assertTrue(server.out().contains("started the native-tcp server"), server.both());
            // every transport and mode is warmed before the first cell is measured
            String log = p.err();
            int firstCell = log.indexOf("[1/3]");
            assertTrue(firstCell > 0, p.both());
            for (String warmed : List.of("native-tcp   warmup (direct,", "native-tcp   warmup (default,", "netty-raw    warmup (direct,")) {
                int at = log.indexOf(warmed);
                assertTrue(at >= 0 && at < firstCell, warmed + " before the first cell: " + p.both());
            }
        }
    }

    @Test
    void tlsRunsNativeTcpAndGrpcNettyWithTlsAndSkipsRawNetty(@TempDir Path dir) throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "--tls", "--transports", "native-tcp,grpc-netty,netty-raw",
                "--payload", "64", "--concurrency", "2", "--transport-warmup", "0.2s", "--warmup", "0.1s",
                "--calls", "100", "--duration", CALLS_BOUND, "--no-plot", "--out", dir.toString());
        assertEquals(0, p.exitCode(), p.both());
        String json = Files.readString(dir.resolve("results.json"));
        assertTrue(json.contains("\"tls\": true"), json);
        assertEquals(2, count(json, "\"transport\": \"native-tcp\""), json);
        assertEquals(2, count(json, "\"transport\": \"grpc-netty\""), json);
        assertEquals(4, count(json, "\"calls\": 100,"), json);
        assertEquals(4, count(json, "\"errors\": 0,"), json);
        assertTrue(json.contains("\"skipped\": [") && json.contains("\"transport\": \"netty-raw\""), json);
        // a TLS client completes no call with a plaintext server (both frameworks refuse the mix), so the calls
        // counted above travelled over TLS
        assertTrue(p.out().contains("TLS: on"), p.both());
    }

    @Test
    void aTransportThatCannotConnectIsSkippedAndTheOthersStillRun(@TempDir Path dir) throws Exception {
        Assumptions.assumeFalse(Files.exists(Path.of("/dev/infiniband")), "this host has RDMA: native-rdma would connect");
        BenchProcess p = BenchProcess.run(LIMIT, "--transports", "native-rdma,netty-raw", "--payload", "64", "--concurrency", "1",
                "--transport-warmup", "0.2s", "--warmup", "0.1s", "--calls", "50", "--duration", CALLS_BOUND, "--no-plot",
                "--executor", "direct", "--out", dir.toString());
        assertEquals(3, p.exitCode(), p.both());
        assertTrue(p.err().contains("skipping native-rdma (direct executor): native-rdma: first call to 127.0.0.1:"), p.both());
        String json = Files.readString(dir.resolve("results.json"));
        assertEquals(1, count(json, "\"transport\": \"netty-raw\""), json);
        assertEquals(1, count(json, "\"calls\": 50,"), json);
        assertTrue(json.contains("\"skipped\": [") && json.contains("\"transport\": \"native-rdma\""), json);
    }

    @Test
    void unknownTransportIsRefused() throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "--transports", "native,smoke-signals");
        assertEquals(2, p.exitCode(), p.both());
        assertTrue(p.err().contains("Invalid value for option '--transports'"), p.both());
        assertTrue(p.err().contains("but was 'smoke-signals'"), p.both());
        assertTrue(p.err().contains("native-tcp"), p.both());
    }

    @Test
    void payloadAboveTheServersMaxIsRefused(@TempDir Path dir) throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "--transports", "netty-raw", "--payload", "64,8m", "--out", dir.toString());
        assertEquals(2, p.exitCode(), p.both());
        assertTrue(p.err().contains("payload 8388608 B (8MiB) does not fit the server's max message size of 4194304 B"), p.both());
    }

    @Test
    void serverThatDoesNotComeUpTimesOut(@TempDir Path dir) throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "--transports", "netty-raw", "--server-timeout", "3s",
                "--server-arg=--start-delay", "--server-arg=120s", "--out", dir.toString());
        assertEquals(3, p.exitCode(), p.both());
        assertTrue(p.err().contains("the server JVM did not come up within 3 s"), p.both());
    }

    @Test
    void serverJvmThatDiesIsReported(@TempDir Path dir) throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "--transports", "netty-raw", "--server-jvm-args", "-XX:+NoSuchFlagAnywhere",
                "--out", dir.toString());
        assertEquals(3, p.exitCode(), p.both());
        assertTrue(p.err().contains("the server JVM exited with code 1 before it was ready"), p.both());
        assertTrue(p.err().contains("NoSuchFlagAnywhere"), p.both());
    }

    @Test
    void unreachableRemoteServerIsReported() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        BenchProcess p = BenchProcess.run(LIMIT, "--server", "127.0.0.1:" + port, "--server-timeout", "2s");
        assertEquals(3, p.exitCode(), p.both());
        assertTrue(p.err().contains("cannot reach the benchmark server at 127.0.0.1:" + port), p.both());
    }

    @Test
    void ctrlCStopsAndStillWritesWhatWasMeasured(@TempDir Path dir) throws Exception {
        try (BenchProcess p = BenchProcess.start("--transports", "netty-raw", "--payload", "64", "--concurrency", "1",
                "--transport-warmup", "0s", "--warmup", "0s", "--duration", "300s", "--out", dir.toString())) {
            // once its start is printed, the cell is measured (or stopped) and reported
            assertTrue(p.awaitOutput(l -> l.startsWith("[1/1] netty-raw unary 64B c=1"), Duration.ofSeconds(60)), p.both());
            p.interrupt();
            // generous: only ends a hung run (the run's own Ctrl-C path may wait 20 s for the cell, then 8 s for the server)
            int code = p.waitFor(Duration.ofSeconds(120));
            assertEquals(130, code, p.both());
            String json = Files.readString(dir.resolve("results.json"));
            assertTrue(json.contains("\"interrupted\": true"), json);
            assertTrue(json.contains("\"partial\": true"), json);
            assertEquals(1, count(json, "\"transport\": \""), json);
            Matcher pid = Pattern.compile("\"server_pid\": \"(\\d+)\"").matcher(json);
            assertTrue(pid.find(), json);
            Optional<ProcessHandle> server = ProcessHandle.of(Long.parseLong(pid.group(1)));
            if (server.isPresent()) {
                try {
                    server.get().onExit().get(30, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    fail("the server JVM outlived the client");
                }
            }
        }
    }

    @Test
    void jmhBenchmarksArePackaged() throws Exception {
        BenchProcess p = BenchProcess.run(LIMIT, "jmh", "-l");
        assertEquals(0, p.exitCode(), p.both());
        for (String b : new String[]{"MarshalBenchmark.serializeIntoSlab", "FrameBenchmark.headerEncodeValidateDecode",
                "UnaryCallBenchmark.nativeBlockingUnary"}) {
            assertTrue(p.out().contains(b), p.both());
        }
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
