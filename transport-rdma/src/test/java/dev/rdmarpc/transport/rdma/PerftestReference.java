package dev.rdmarpc.transport.rdma;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * perftest's {@code ib_read_bw} run between {@link RdmaPerfMain}'s measured windows, so that each window is compared
 * with the device's speed just before and just after it (the emulated device drifts by half within one boot).
 * {@code -Drdmarpc.perf.reference=COMMAND} gives the command (for example {@code ib_read_bw -d rxe0 -i 1 -x 1 -e -s
 * 1048576 -n 200}): it is started once as the server, then, once the server listens on its TCP port, as the client of
 * {@code -Drdmarpc.perf.referencePeer} (an address of this host's RDMA netdev), and the client's "BW average" is the
 * reference in MB/s.
 */
final class PerftestReference {
    /** perftest's TCP port when the command gives no {@code -p}. */
    private static final int DEFAULT_PORT = 18515;
    /** TCP state LISTEN as /proc/net/tcp writes it. */
    private static final String LISTEN = "0A";
    private static final long LISTEN_LIMIT_MILLIS = 60_000;
    private static final long RUN_LIMIT_MINUTES = 10;

    private final List<String> command;
    private final String peer;
    private final String size;
    private final int port;
    /** The server's port as /proc/net/tcp writes the end of a local address: ":" and four upper-case hex digits. */
    private final String listenSuffix;

    private PerftestReference(List<String> command, String peer) {
        this.command = command;
        this.peer = peer;
        this.size = option(command, "-s", null);
        this.port = Integer.parseInt(option(command, "-p", String.valueOf(DEFAULT_PORT)));
        this.listenSuffix = String.format(":%04X", port);
    }

    /** The value after {@code flag} in {@code command}, or {@code otherwise} when absent (null: required). */
    private static String option(List<String> command, String flag, String otherwise) {
        int at = command.indexOf(flag);
        if (at >= 0 && at + 1 < command.size()) {
            return command.get(at + 1);
        }
        if (otherwise == null) {
            throw new IllegalArgumentException("rdmarpc.perf.reference needs " + flag + ": " + command);
        }
        return otherwise;
    }

    /** The reference {@code rdmarpc.perf.reference} and {@code rdmarpc.perf.referencePeer} describe, or null. */
    static PerftestReference fromSystemProperties() {
        String command = System.getProperty("rdmarpc.perf.reference", "");
        if (command.isBlank()) {
            return null;
        }
        String peer = System.getProperty("rdmarpc.perf.referencePeer", "");
        if (peer.isBlank()) {
            throw new IllegalArgumentException("rdmarpc.perf.reference needs rdmarpc.perf.referencePeer");
        }
        return new PerftestReference(Arrays.asList(command.trim().split("\\s+")), peer.trim());
    }

    /** Runs the server, and its client once the server listens; returns the client's BW average in MB/s. */
    double run() throws Exception {
        Process server = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            PerfPhases.pollUntil(LISTEN_LIMIT_MILLIS, () -> !server.isAlive() || serverListens());
            if (!serverListens()) {
                throw new IOException("perftest server is not listening on TCP port " + port + ": " + command);
            }
            List<String> client = new ArrayList<>(command);
            client.add(peer);
            Process p = new ProcessBuilder(client).redirectErrorStream(true).start();
            String output = output(p);
            if (!p.waitFor(RUN_LIMIT_MINUTES, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException("perftest client did not end: " + client);
            }
            if (p.exitValue() != 0) {
                throw new IOException("perftest client failed (exit code " + p.exitValue() + "): " + client + "\n"
                        + output);
            }
            return bandwidth(output);
        } finally {
            if (!server.waitFor(RUN_LIMIT_MINUTES, TimeUnit.MINUTES)) {
                server.destroyForcibly();
            }
        }
    }

    /** Whether a TCP socket of this host (IPv4 or IPv6) listens on the server's port. */
    private boolean serverListens() throws IOException {
        for (String table : new String[]{"/proc/net/tcp", "/proc/net/tcp6"}) {
            Path path = Path.of(table);
            if (!Files.exists(path)) {
                continue;
            }
            // "sl local_address rem_address st ...": the local address ends with the port, st is the state
            for (String line : Files.readAllLines(path)) {
                String[] f = line.strip().split("\\s+");
                if (f.length > 3 && f[1].endsWith(listenSuffix) && f[3].equals(LISTEN)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String output(Process p) throws IOException {
        StringBuilder out = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    /** The BW average (4th field) of the result line, the one that starts with the message size. */
    private double bandwidth(String output) throws IOException {
        for (String line : output.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].equals(size)) {
                return Double.parseDouble(f[3]);
            }
        }
        throw new IOException("no result line for " + size + " bytes in perftest's output:\n" + output);
    }
}
