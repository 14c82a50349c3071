package dev.rdmarpc.samples;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.health.HealthService;
import dev.rdmarpc.samples.kv.KeyValueStore;
import dev.rdmarpc.samples.kv.KvServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A gRPC client not written in Java: Python's grpcio ({@code src/test/python/kv_grpcio_client.py}) calls the native KV
 * sample server over HTTP/2. Skipped, saying why, where no python3 can import grpc (Debian: python3-grpcio).
 */
class PythonGrpcClientTest {
    private static final Path SCRIPT = Path.of("src/test/python/kv_grpcio_client.py");

    /** The first python3 that imports grpc: the one on the PATH, else the system's (where Debian's package goes). */
    static String pythonWithGrpc() {
        for (String python : List.of("python3", "/usr/bin/python3")) {
            try {
                Process p = new ProcessBuilder(python, "-c", "import grpc").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                if (p.waitFor() == 0) {
                    return python;
                }
            } catch (IOException e) {
                // not there: try the next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    @Test
    void grpcioClientCallsTheKvServer() throws Exception {
        String python = pythonWithGrpc();
        assumeTrue(python != null, "no python3 with the grpc module (install Debian's python3-grpcio): the Python client is not run");
        assertTrue(Files.isRegularFile(SCRIPT), SCRIPT.toAbsolutePath().toString());
        RpcServer server = KvServer.builder(0, new KeyValueStore(), new HealthService(), 64)
                .intercept(new StockGrpcClientsTest.EchoMetadata()).build().start();
        try {
            Process p = new ProcessBuilder(python, SCRIPT.toString(), Integer.toString(server.getPort()))
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(5, TimeUnit.MINUTES), "the client has ended (bound for a hung test only)");
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("all checks passed"), out);
        } finally {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }
}
