package dev.rdmarpc.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.Callable;

/** The {@code server} subcommand: a benchmark server process for a client on this or another machine. */
@Command(name = "server", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = "Runs a benchmark server process. A client (rdmarpc-bench --server HOST:PORT) connects to its control "
                + "port and has it start the server of each transport in turn, on --data-port (default: any free port).")
public final class ServerCommand implements Callable<Integer> {

    @Option(names = "--host", defaultValue = "0.0.0.0", description = "Address to listen on. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--port", defaultValue = "7070", description = "Control port (0: any free one). Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--data-port", defaultValue = "0",
            description = "Port of the transports' servers (0: any free one; set it when a firewall is in the way). Default: ${DEFAULT-VALUE}.")
    int dataPort;

    @Option(names = "--max-message", converter = Converters.SizeConverter.class, defaultValue = "4m",
            description = "Max message size of every transport's server. Default: ${DEFAULT-VALUE}.")
    int maxMessage;

    @Option(names = "--exit-with-parent", hidden = true, description = "Exit when standard input closes (the local client's child).")
    boolean exitWithParent;

    @Option(names = "--start-delay", hidden = true, converter = Converters.DurationConverter.class, defaultValue = "0s",
            description = "Wait this long before listening (tests).")
    java.time.Duration startDelay;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535 || dataPort < 0 || dataPort > 65535) {
            throw new BenchException(BenchException.BAD_INPUT, "ports must be between 0 and 65535");
        }
        if (maxMessage < 1024) {
            throw new BenchException(BenchException.BAD_INPUT, "--max-message must be at least 1k");
        }
        if (exitWithParent) {
            Thread watcher = new Thread(ServerCommand::exitWhenStdinCloses, "bench-parent-watch");
            watcher.setDaemon(true);
            watcher.start();
        }
        Thread.sleep(startDelay.toMillis());
        BenchServerHost host = new BenchServerHost(this.host, port, dataPort, maxMessage, System.out);
        try {
            host.start();
        } catch (IOException e) {
            throw new BenchException(BenchException.FAILED, "cannot listen on " + this.host + ":" + port + ": " + e.getMessage(), e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(host::close, "bench-server-shutdown"));
        System.out.println(ControlProtocol.READY_PREFIX + "control=" + host.controlPort() + " pid=" + ProcessHandle.current().pid());
        System.out.flush();
        host.serve();
        return 0;
    }

    private static void exitWhenStdinCloses() {
        InputStream in = System.in;
        try {
            while (in.read() >= 0) {
                // the parent writes nothing; wait for it to go away
            }
        } catch (IOException ignored) {
            // treated as closed
        }
        System.exit(0);
    }
}
