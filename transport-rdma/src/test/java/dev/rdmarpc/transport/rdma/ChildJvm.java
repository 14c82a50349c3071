package dev.rdmarpc.transport.rdma;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Starts {@link ChildClientMain} in a separate JVM with this JVM's class path and {@code rdmarpc.*} properties, and
 * collects its output lines.
 */
final class ChildJvm implements AutoCloseable {
    final Process process;
    private final List<String> lines = new ArrayList<>();

    ChildJvm(List<String> extraJvmArgs, String... args) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xmx384m", "-cp", classPath()));
        System.getProperties().forEach((k, v) -> {
            if (k.toString().startsWith("rdmarpc.")) {
                cmd.add("-D" + k + "=" + v);
            }
        });
        cmd.addAll(extraJvmArgs);
        cmd.add(ChildClientMain.class.getName());
        cmd.addAll(List.of(args));
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    RdmaTests.log("child: " + line);
                    synchronized (lines) {
                        lines.add(line);
                        lines.notifyAll();
                    }
                }
            } catch (IOException e) {
                // the process went away
            }
        }, "child-jvm-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Waits for a line starting with {@code prefix}; null on timeout or exit. */
    String awaitLine(String prefix, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        synchronized (lines) {
            while (true) {
                for (String l : lines) {
                    if (l.startsWith(prefix)) {
                        return l;
                    }
                }
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return null;
                }
                lines.wait(Math.min(left, 200));
            }
        }
    }

    List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    int waitFor(long millis) throws InterruptedException {
        if (!process.waitFor(millis, TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            return -1;
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** The class path that loaded the tests: the loader's URLs (JUnit's console launcher) and java.class.path. */
    private static String classPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (ClassLoader cl = ChildJvm.class.getClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        // not a file
                    }
                }
            }
        }
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!e.isEmpty()) {
                entries.add(e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
