package dev.rdmarpc.samples.blocks;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.health.HealthService;
import dev.rdmarpc.reflection.ReflectionService;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** Command-line entry point that serves the blocks of one file. */
@Command(name = "block-server", mixinStandardHelpOptions = true, version = "rdmarpc block store sample 0.1",
        description = "Serves the blocks of one memory-mapped file: block bytes travel as attachments, sent from the "
                + "mapping with no copy (over RDMA, read by the client's NIC); RDMA when the client and this host can, "
                + "TCP otherwise.")
public final class BlockServer implements Callable<Integer> {
    @Option(names = "--file", required = true, description = "The store's file; created and filled with a known pattern when missing or empty.")
    Path file;

    @Option(names = "--block-size", defaultValue = "4096", description = "Bytes per block (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(names = "--blocks", defaultValue = "4096", description = "Blocks of a new file (default: ${DEFAULT-VALUE}).")
    long blocks;

    @Option(names = "--max-call-mib", defaultValue = "16", description = "Most MiB one call moves (default: ${DEFAULT-VALUE}).")
    int maxCallMib;

    @Option(names = {"-p", "--port"}, defaultValue = "50052", description = "Port to listen on (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    @Option(names = "--port-file", description = "Write the bound port to this file once listening (for scripts).")
    Path portFile;

    @Option(names = "--handshake-timeout-ms", defaultValue = "20000",
            description = "Time a new connection has to send its HELLO (RDMA upgrade included), ms (default: ${DEFAULT-VALUE}; "
                    + "raise it in an emulated RDMA guest, where opening the device takes tens of seconds).")
    long handshakeTimeoutMs;

    @Override
    public Integer call() throws Exception {
        BlockFile store = BlockFile.open(file, blockSize, blocks);
        int maxCallBytes = Math.multiplyExact(maxCallMib, 1 << 20);
        RpcServer server = RpcServer.forPort(port)
                // only Write takes an attachment (the blocks to write): the one method that accepts them
                .addService(new BlockStoreService(store, maxCallBytes).bindService()
                        .withAttachments(BlockStoreRpc.getWriteMethod(), maxCallBytes))
                .addService(new HealthService())
                .addService(new ReflectionService())
                .transportMode(transport)
                .handshakeTimeout(Duration.ofMillis(handshakeTimeoutMs))
                .build()
                .start();
        System.out.println("block-server listening on port " + server.getPort() + " (transport " + transport + "), "
                + store.blockCount() + " blocks of " + store.blockSize() + " B in " + file);
        if (portFile != null) {
            java.nio.file.Files.writeString(portFile, Integer.toString(server.getPort()));
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            try {
                server.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            store.force();
            store.close();
            System.out.println("block-server stopped");
        }, "block-server-shutdown"));
        server.awaitTermination(Long.MAX_VALUE, TimeUnit.DAYS);
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BlockServer()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }
}
