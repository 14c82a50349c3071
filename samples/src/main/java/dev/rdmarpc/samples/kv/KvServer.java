package dev.rdmarpc.samples.kv;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.health.HealthService;
import dev.rdmarpc.reflection.ReflectionService;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/** Command-line entry point that serves the key-value service. */
@Command(name = "kv-server", mixinStandardHelpOptions = true, version = "rdmarpc KV sample 0.1",
        description = "Serves the rdmarpc key-value sample: RDMA when the client and this host can, TCP otherwise.")
public final class KvServer implements Callable<Integer> {
    @Option(names = {"-p", "--port"}, defaultValue = "50051", description = "Port to listen on (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    /**
     * The largest request the sample accepts by default, MiB: a value of {@link KeyValueService#MAX_VALUE_SIZE} with
     * its key. The connection window is raised to fit it (17 MiB), so what one connection can make the server hold
     * stays about the default bound (PROTOCOL.md "Limits": about 60 MiB).
     */
    public static final int DEFAULT_MAX_MESSAGE_MIB = 17;

    @Option(names = "--max-message-mib", defaultValue = "" + DEFAULT_MAX_MESSAGE_MIB,
            description = "Largest request accepted, MiB (default: ${DEFAULT-VALUE}).")
    int maxMessageMib;

    @Option(names = "--port-file", description = "Write the bound port to this file once listening (for scripts).")
    java.nio.file.Path portFile;

    @Option(names = "--metrics-port", defaultValue = "-1",
            description = "Serve Prometheus metrics at http://host:PORT/metrics (0 picks a free port; default: off).")
    int metricsPort;

    @Option(names = "--handshake-timeout-ms", defaultValue = "20000",
            description = "Time a new connection has to send its HELLO (RDMA upgrade included), ms (default: ${DEFAULT-VALUE}; "
                    + "raise it in an emulated RDMA guest, where opening the device takes tens of seconds).")
    long handshakeTimeoutMs;

    @Override
    public Integer call() throws Exception {
        KeyValueStore store = new KeyValueStore();
        MetricsEndpoint metrics = metricsPort >= 0 ? new MetricsEndpoint(metricsPort) : null;
        RpcServer.Builder builder = builder(port, store, new HealthService(), maxMessageMib);
        if (metrics != null) {
            builder.meterRegistry(metrics.registry());
            System.out.println("kv-server metrics at http://127.0.0.1:" + metrics.port() + "/metrics");
        }
        RpcServer server = builder
                .transportMode(transport)
                .handshakeTimeout(java.time.Duration.ofMillis(handshakeTimeoutMs))
                .build()
                .start();
        System.out.println("kv-server listening on port " + server.getPort() + " (transport " + transport + ")");
        if (portFile != null) {
            java.nio.file.Files.writeString(portFile, Integer.toString(server.getPort()));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("kv-server shutting down (" + store.size() + " keys)");
            server.close();
            if (metrics != null) {
                metrics.close();
            }
        }, "kv-server-shutdown"));
        server.awaitTermination(Long.MAX_VALUE, java.util.concurrent.TimeUnit.DAYS);
        return 0;
    }

    /**
     * The KV server's builder: the key-value service, the standard health service (so gRPC probes can ask it) and server
     * reflection (so grpcurl-like tools can list and describe its services), with
     * requests up to {@code maxMessageMib} MiB. rdmarpc clients and standard gRPC clients (HTTP/2) share its port.
     */
    public static RpcServer.Builder builder(int port, KeyValueStore store, HealthService health, int maxMessageMib) {
        return RpcServer.forPort(port)
                .addService(new KeyValueService(store))
                .addService(health)
                .addService(new ReflectionService())
                .maxInboundMessageSize(maxMessageMib << 20);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new KvServer()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }
}
