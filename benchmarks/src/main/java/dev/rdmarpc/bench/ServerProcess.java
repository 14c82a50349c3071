package dev.rdmarpc.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The benchmark server started as a separate JVM on this machine: same java, same class path, the
 * same JVM flags as this one. Its output goes to a log file; it exits when this process's end of
 * its stdin closes, so it never outlives the client.
 */
final class ServerProcess implements AutoCloseable {
    /** Flags every benchmark JVM needs, added when this JVM was started without them. */
    static final List<String> REQUIRED_FLAGS = List.of("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow");

    private final Process process;
    private final int controlPort;
    private final Thread pump;

    private ServerProcess(Process process, int controlPort, Thread pump) {
        this.process = process;
        this.controlPort = controlPort;
        this.pump = pump;
    }

    /** The JVM flags of this JVM that the server JVM gets too (debug agents left out), plus the required ones. */
    static List<String> inheritedJvmFlags() {
        List<String> flags = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-agentlib:jdwp") || a.startsWith("-Xrunjdwp") || a.startsWith("-javaagent:")
                    || a.startsWith("-Djdk.internal.vm.ci") || a.startsWith("-XX:StartFlightRecording")) {
                continue;
            }
            flags.add(a);
        }
        for (String r : REQUIRED_FLAGS) {
            String key = r.substring(0, r.indexOf('='));
            if (flags.stream().noneMatch(f -> f.startsWith(key))) {
                flags.add(r);
            }
        }
        return flags;
    }

    /**
     * Starts the server JVM and waits until its control port listens.
     *
     * @throws BenchException when it exits or stays silent past the timeout (it is then killed)
     */
    static ServerProcess start(List<String> jvmFlags, List<String> serverArgs, Path log, Duration timeout) {
        List<String> cmd = new ArrayList<>();
        // Its own session: Ctrl-C on the terminal reaches the client only, which ends the cell
        // cleanly, writes the results, then ends the server.
        for (String setsid : List.of("/usr/bin/setsid", "/bin/setsid")) {
            if (Files.isExecutable(Paths.get(setsid))) {
                cmd.add(setsid);
                break;
            }
        }
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(BenchMain.class.getName());
        cmd.add("server");
        cmd.addAll(serverArgs);
        Process p;
        try {
            Files.createDirectories(log.toAbsolutePath().getParent());
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new BenchException(BenchException.FAILED, "cannot start the server JVM: " + e.getMessage(), e);
        }
        CompletableFuture<Integer> ready = new CompletableFuture<>();
        Deque<String> tail = new ArrayDeque<>();
        Thread pump = new Thread(() -> pump(p, log, ready, tail), "bench-server-output");
        pump.setDaemon(true);
        pump.start();
        try {
            int port = ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new ServerProcess(p, port, pump);
        } catch (TimeoutException e) {
            kill(p);
            throw new BenchException(BenchException.FAILED, "the server JVM did not come up within " + timeout.toSeconds()
                    + " s (killed it; its output is in " + log + lastLines(tail) + ")");
        } catch (ExecutionException e) {
            kill(p);
            throw new BenchException(BenchException.FAILED, "the server JVM " + e.getCause().getMessage() + lastLines(tail));
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw new BenchException(BenchException.FAILED, "interrupted while starting the server JVM");
        }
    }

    private static String lastLines(Deque<String> tail) {
        synchronized (tail) {
            return tail.isEmpty() ? "" : "; last output:\n  " + String.join("\n  ", tail);
        }
    }

    private static void pump(Process p, Path log, CompletableFuture<Integer> ready, Deque<String> tail) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter w = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            String line;
            while ((line = r.readLine()) != null) {
                w.println(line);
                synchronized (tail) {
                    tail.addLast(line);
                    if (tail.size() > 8) {
                        tail.removeFirst();
                    }
                }
                if (!ready.isDone() && line.startsWith(ControlProtocol.READY_PREFIX)) {
                    ready.complete(Integer.parseInt(ControlProtocol.parseOk("OK " + line.substring(ControlProtocol.READY_PREFIX.length())).get("control")));
                }
            }
        } catch (IOException | RuntimeException e) {
            ready.completeExceptionally(new IllegalStateException("output could not be read: " + e.getMessage()));
        }
        try {
            int code = p.waitFor();
            ready.completeExceptionally(new IllegalStateException("exited with code " + code + " before it was ready"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void kill(Process p) {
        p.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The process id (for the record). */
    long pid() {
        return process.pid();
    }

    /** The control port on 127.0.0.1. */
    int controlPort() {
        return controlPort;
    }

    /** Ends the server JVM: closes its stdin (it exits), then kills it if it lingers. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // it is going anyway
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(3, TimeUnit.SECONDS)) {
                    kill(process);
                }
            }
            pump.join(2000);
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
        }
    }
}
