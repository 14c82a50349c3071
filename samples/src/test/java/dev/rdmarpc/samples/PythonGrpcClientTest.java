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
 * gRPC clients not written in Java: Python's grpcio ({@code src/test/python/kv_grpcio_client.py}, and
 * {@code kv_reflection_client.py} through server reflection) calls the native KV sample server over HTTP/2. Skipped,
 * saying why, where no python3 can import grpc (Debian: python3-grpcio).
 */
class PythonGrpcClientTest {
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
        runAgainstTheKvServer(Path.of("src/test/python/kv_grpcio_client.py"));
    }

    /**
     * Server reflection from Python: list the services, fetch KeyValue's .proto files by symbol, call Put with message
     * classes built from them. Debian ships no grpcio-reflection package, so the script speaks reflection with grpcio
     * and protobuf alone, as a tool that has only the reflection protocol would.
     */
    @Test
    void reflectionFromPythonDescribesAndCallsTheKvServer() throws Exception {
        runAgainstTheKvServer(Path.of("src/test/python/kv_reflection_client.py"));
    }

    private static void runAgainstTheKvServer(Path script) throws Exception {
        String python = pythonWithGrpc();
        assumeTrue(python != null, "no python3 with the grpc module (install Debian's python3-grpcio): the Python client is not run");
        assertTrue(Files.isRegularFile(script), script.toAbsolutePath().toString());
        RpcServer server = KvServer.builder(0, new KeyValueStore(), new HealthService(), KvServer.DEFAULT_MAX_MESSAGE_MIB)
                .intercept(new StockGrpcClientsTest.EchoMetadata()).build().start();
        try {
            Process p = new ProcessBuilder(python, script.toString(), Integer.toString(server.getPort()))
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
