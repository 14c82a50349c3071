package dev.rdmarpc.transport.rdma;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The client JVMs of the scale harness ({@link ScaleClientMain}), started with this JVM's class path and
 * {@code rdmarpc.*} properties: commands go to each one's standard input, its answers (lines starting with an upper-case
 * word) come back through a queue per JVM; everything else it prints is echoed with its index.
 */
final class ScaleClients implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<Writer> inputs = new ArrayList<>();
    private final List<BlockingQueue<String>> answers = new ArrayList<>();

    ScaleClients(int count, String host, int port, List<String> jvmOptions) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int i = 0; i < count; i++) {
            List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
            cmd.addAll(jvmOptions);
            System.getProperties().forEach((k, v) -> {
                if (k.toString().startsWith("rdmarpc.")) {
                    cmd.add("-D" + k + "=" + v);
                }
            });
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ScaleClientMain.class.getName(), host,
                    String.valueOf(port)));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            processes.add(p);
            inputs.add(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
            BlockingQueue<String> q = new LinkedBlockingQueue<>();
            answers.add(q);
            int index = i;
            Thread reader = new Thread(() -> read(index, p, q), "scale-client-" + i);
            reader.setDaemon(true);
            reader.start();
        }
    }

    private static void read(int index, Process p, BlockingQueue<String> q) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.matches("^(OPENED|DONE|BYE|UNKNOWN)\\b.*")) {
                    q.add(line);
                } else {
                    System.out.println("rdmarpc-scale-client-" + index + ": " + line);
                }
            }
        } catch (IOException e) {
            // the process went away
        }
        q.add("EXITED " + (p.isAlive() ? "?" : String.valueOf(p.exitValue())));
    }

    int size() {
        return processes.size();
    }

    /** Sends {@code command} to client {@code i}. */
    void send(int i, String command) throws IOException {
        Writer w = inputs.get(i);
        w.write(command + "\n");
        w.flush();
    }

    /** The next answer of client {@code i}; fails if it exited or said nothing for {@code minutes}. */
    String answer(int i, long minutes) throws InterruptedException {
        String a = answers.get(i).poll(minutes, TimeUnit.MINUTES);
        if (a == null || a.startsWith("EXITED") || a.startsWith("UNKNOWN")) {
            throw new IllegalStateException("scale client " + i + " answered " + a);
        }
        return a;
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 0; i < processes.size(); i++) {
            try {
                send(i, "QUIT");
            } catch (IOException e) {
                // gone already
            }
        }
        for (Process p : processes) {
            if (!p.waitFor(2, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }
}
