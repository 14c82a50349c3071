package dev.rdmarpc.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** The packaged rdmarpc-bench jar run as a real process, with a hard time limit (killed past it, never a hang). */
final class BenchProcess implements AutoCloseable {
    private final Process process;
    private final StringBuffer out = new StringBuffer();
    private final StringBuffer err = new StringBuffer();
    private final Thread outPump;
    private final Thread errPump;

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
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags());
        cmd.add("-jar");
        cmd.add(jar().toString());
        cmd.addAll(List.of(args));
        return new BenchProcess(new ProcessBuilder(cmd).start());
    }

    /** Runs to completion; fails (after killing it) when it takes longer than {@code limit}. */
    static BenchProcess run(Duration limit, String... args) throws Exception {
        BenchProcess p = start(args);
        p.waitFor(limit);
        return p;
    }

    private static Thread pump(InputStream in, StringBuffer into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    into.append(line).append('\n');
                }
            } catch (IOException ignored) {
                // process gone
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
        outPump.join(5000);
        errPump.join(5000);
        return process.exitValue();
    }

    /** Waits until a line of stdout or stderr matches, or the time is up. */
    boolean awaitOutput(Predicate<String> match, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < end) {
            if (out.toString().lines().anyMatch(match) || err.toString().lines().anyMatch(match)) {
                return true;
            }
            if (!process.isAlive()) {
                return false;
            }
            Thread.sleep(50);
        }
        return false;
    }

    /** Sends SIGINT, as Ctrl-C does. */
    void interrupt() throws Exception {
        new ProcessBuilder("kill", "-INT", String.valueOf(process.pid())).inheritIO().start().waitFor();
    }

    int exitCode() {
        return process.exitValue();
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }

    String both() {
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
