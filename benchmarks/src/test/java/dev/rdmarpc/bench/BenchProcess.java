package dev.rdmarpc.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The packaged rdmarpc-bench jar run as a real process, with a hard time limit (killed past it, never a hang).
 * Its output is collected line by line; waiting for a line wakes up as each line arrives.
 */
final class BenchProcess implements AutoCloseable {
    /** Most time the output of a process that has exited takes to be read to its end. */
    private static final long PUMP_JOIN_MILLIS = 30_000;

    private final Process process;
    private final StringBuilder out = new StringBuilder();
    private final StringBuilder err = new StringBuilder();
    private final Thread outPump;
    private final Thread errPump;
    private int streamsEnded;

    private BenchProcess(Process process) {
        this.process = process;
        this.outPump = pump(process.getInputStream(), out);
        this.errPump = pump(process.getErrorStream(), err);
    }

    static Path jar() {
        String p = System.getProperty("bench.jar");
        if (p == null) {
            throw new IllegalStateException("system property bench.jar not set (run through failsafe: ./mvnw verify)");
        }
        return Paths.get(p);
    }

    static List<String> jvmFlags() {
        String f = System.getProperty("bench.jvmFlags", "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow");
        return List.of(f.trim().split("\\s+"));
    }

    /** Starts {@code java <flags> -jar rdmarpc-bench.jar <args>}. */
    static BenchProcess start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (sigintIgnoredHere()) {
            // GNU env gives SIGINT back its default action, so the run's JVM installs its Ctrl-C handling
            cmd.addAll(List.of("env", "--default-signal=INT"));
        }
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags());
        cmd.add("-jar");
        cmd.add(jar().toString());
        cmd.addAll(List.of(args));
        return new BenchProcess(new ProcessBuilder(cmd).start());
    }

    /**
     * Whether this JVM ignores SIGINT, as every job a shell starts in the background without job control does
     * ({@code mvn verify &} in a script). A JVM that starts with SIGINT ignored keeps it ignored and runs no shutdown
     * hook on Ctrl-C, and a child inherits that, so the run would never see the test's Ctrl-C.
     */
    private static boolean sigintIgnoredHere() {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) {
            return false;
        }
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("SigIgn:")) {
                    long ignored = Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16);
                    return (ignored & (1L << (2 - 1))) != 0; // bit n-1 is signal n; SIGINT is 2
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** Runs to completion; fails (after killing it) when it takes longer than {@code limit}. */
    static BenchProcess run(Duration limit, String... args) throws Exception {
        BenchProcess p = start(args);
        p.waitFor(limit);
        return p;
    }

    private Thread pump(InputStream in, StringBuilder into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (this) {
                        into.append(line).append('\n');
                        notifyAll();
                    }
                }
            } catch (IOException ignored) {
                // process gone
            }
            synchronized (this) {
                streamsEnded++;
                notifyAll();
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits for the exit; kills it and throws if it outlives {@code limit}. */
    int waitFor(Duration limit) throws Exception {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            throw new AssertionError("rdmarpc-bench did not finish within " + limit + "\nstdout:\n" + out + "\nstderr:\n" + err);
        }
        outPump.join(PUMP_JOIN_MILLIS);
        errPump.join(PUMP_JOIN_MILLIS);
        return process.exitValue();
    }

    /** Waits until a line of stdout or stderr matches; false when the output ends or {@code limit} passes first. */
    synchronized boolean awaitOutput(Predicate<String> match, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (true) {
            if (out.toString().lines().anyMatch(match) || err.toString().lines().anyMatch(match)) {
                return true;
            }
            long left = end - System.nanoTime();
            if (streamsEnded == 2 || left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Sends SIGINT, as Ctrl-C does. */
    void interrupt() throws Exception {
        new ProcessBuilder("kill", "-INT", String.valueOf(process.pid())).inheritIO().start().waitFor();
    }

    int exitCode() {
        return process.exitValue();
    }

    synchronized String out() {
        return out.toString();
    }

    synchronized String err() {
        return err.toString();
    }

    synchronized String both() {
        return "stdout:\n" + out + "\nstderr:\n" + err;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }
}
