package dev.rdmarpc.samples.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.grpc.RdmaServerBuilder;
import io.grpc.Server;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Serves the stock grpc-java Greeter service over rdmarpc. The only change from a grpc-netty
 * server is the builder: {@code RdmaServerBuilder.forPort(port)} for {@code NettyServerBuilder.forPort(port)}.
 */
@Command(name = "greeter-server", mixinStandardHelpOptions = true, version = "rdmarpc grpc sample 0.1",
        description = "Serves grpc-java's Greeter over rdmarpc: RDMA when the client and this host can, TCP otherwise.")
public final class GreeterServer implements Callable<Integer> {
    @Option(names = {"-p", "--port"}, defaultValue = "50052", description = "Port to listen on (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    @Option(names = "--port-file", description = "Write the bound port to this file once listening (for scripts).")
    java.nio.file.Path portFile;

    @Override
    public Integer call() throws Exception {
        Server server = RdmaServerBuilder.forPort(port)
                .transportMode(transport)
                .addService(new GreeterService())
                .build()
                .start();
        System.out.println("greeter-server listening on port " + server.getPort() + " (transport " + transport + ")");
        if (portFile != null) {
            java.nio.file.Files.writeString(portFile, Integer.toString(server.getPort()));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdown();
            try {
                if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                    server.shutdownNow();
                }
            } catch (InterruptedException e) {
                server.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }, "greeter-server-shutdown"));
        server.awaitTermination();
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GreeterServer()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }
}
