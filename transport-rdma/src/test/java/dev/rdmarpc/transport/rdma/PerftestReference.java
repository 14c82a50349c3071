package dev.rdmarpc.transport.rdma;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * perftest's {@code ib_read_bw} run between {@link RdmaPerfMain}'s measured windows, so that each window is compared
 * with the device's speed just before and just after it (the emulated device drifts by half within one boot).
 * {@code -Drdmarpc.perf.reference=COMMAND} gives the command (for example {@code ib_read_bw -d rxe0 -i 1 -x 1 -e -s
 * 1048576 -n 200}): it is started once as the server, then as the client of {@code -Drdmarpc.perf.referencePeer}
 * (an address of this host's RDMA netdev), and the client's "BW average" is the reference in MB/s.
 */
final class PerftestReference {
    /** Connection attempts of the client while its server starts listening. */
    private static final int CONNECT_ATTEMPTS = 30;
    private static final long ATTEMPT_PAUSE_MILLIS = 500;
    private static final long RUN_LIMIT_MINUTES = 10;

    private final List<String> command;
    private final String peer;
    private final String size;

    private PerftestReference(List<String> command, String peer) {
        this.command = command;
        this.peer = peer;
        int s = command.indexOf("-s");
        if (s < 0 || s + 1 >= command.size()) {
            throw new IllegalArgumentException("rdmarpc.perf.reference needs -s SIZE: " + command);
        }
        this.size = command.get(s + 1);
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

    /** Runs the server and its client once; returns the client's BW average in MB/s. */
    double run() throws IOException, InterruptedException {
        Process server = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            List<String> client = new ArrayList<>(command);
            client.add(peer);
            String lastOutput = "";
            for (int attempt = 1; attempt <= CONNECT_ATTEMPTS && server.isAlive(); attempt++) {
                // the server listens a moment after it starts: the client tries again until it connects
                Thread.sleep(ATTEMPT_PAUSE_MILLIS);
                Process p = new ProcessBuilder(client).redirectErrorStream(true).start();
                lastOutput = output(p);
                if (!p.waitFor(RUN_LIMIT_MINUTES, TimeUnit.MINUTES)) {
                    p.destroyForcibly();
                    throw new IOException("perftest client did not end: " + client);
                }
                if (p.exitValue() == 0) {
                    return bandwidth(lastOutput);
                }
            }
            throw new IOException("perftest client did not run: " + client + "\n" + lastOutput);
        } finally {
            if (!server.waitFor(RUN_LIMIT_MINUTES, TimeUnit.MINUTES)) {
                server.destroyForcibly();
            }
        }
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
