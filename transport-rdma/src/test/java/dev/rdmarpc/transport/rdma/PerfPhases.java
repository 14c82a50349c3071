package dev.rdmarpc.transport.rdma;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Which of {@link RdmaPerfMain}'s measurements run, how long each warms up, and a profiler switched on only while one
 * is measured. A warm-up repeats its batch of calls until one batch spent at most {@value #SETTLED_COMPILE_SHARE} of
 * its time in the JIT compilers (in the emulated guest, hundreds of calls are not enough: the compilers then take
 * half of the CPU the measured calls run on).
 * {@code -Drdmarpc.perf.phases=a,b} picks measurements by name (default: all). {@code -Drdmarpc.perf.control=CTL,ACK}
 * names the two FIFOs of a {@code perf record --control fifo:CTL,ACK -D -1} started beside this JVM: each measured
 * loop is wrapped in {@code enable} and {@code disable}, each acknowledged before going on, so a profile holds the
 * measured calls and nothing of start-up or warm-up.
 */
final class PerfPhases {
    /** Compiler time over wall time, in one warm-up batch, below which the JIT counts as settled. */
    static final double SETTLED_COMPILE_SHARE = 0.02;
    /** Warm-up batches at most, settled or not. */
    static final int MAX_WARM_UP_BATCHES = 200;
    /**
     * Calls (or streamed messages) a warm-up makes at least: beyond C2's invocation thresholds (5,000 calls of a
     * method, 15,000 calls and loop iterations), so the per-call code is compiled at its last level before measuring.
     */
    static final int MIN_WARM_UP_CALLS = 15_000;
    /** The longest wait for the JIT's compile queues to empty after a warm-up. */
    static final long COMPILERS_IDLE_LIMIT_MILLIS = 60_000;
    /** Pause between two checks of a condition {@link #pollUntil} waits for. */
    private static final long POLL_MILLIS = 50;

    private final Set<String> phases;
    private final Path control;
    private final Path ack;
    private final PerftestReference reference = PerftestReference.fromSystemProperties();
    private int recordings;

    private PerfPhases(Set<String> phases, Path control, Path ack) {
        this.phases = phases;
        this.control = control;
        this.ack = ack;
    }

    /** Reads {@code rdmarpc.perf.phases} and {@code rdmarpc.perf.control}. */
    static PerfPhases fromSystemProperties() {
        String only = System.getProperty("rdmarpc.perf.phases", "");
        Set<String> phases = only.isBlank() ? Set.of()
                : Arrays.stream(only.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        String fifos = System.getProperty("rdmarpc.perf.control", "");
        if (fifos.isBlank()) {
            return new PerfPhases(phases, null, null);
        }
        String[] pair = fifos.split(",");
        if (pair.length != 2) {
            throw new IllegalArgumentException("rdmarpc.perf.control must be CTL_FIFO,ACK_FIFO, not " + fifos);
        }
        return new PerfPhases(phases, Path.of(pair[0].trim()), Path.of(pair[1].trim()));
    }

    /** Whether the measurement called {@code name} runs. */
    boolean runs(String name) {
        return phases.isEmpty() || phases.contains(name);
    }

    /**
     * Runs {@code batch} (which makes {@code callsPerBatch} calls or messages) until one run of it spent at most
     * {@link #SETTLED_COMPILE_SHARE} of its time compiling and the runs made at least {@value #MIN_WARM_UP_CALLS}
     * calls, or {@link #MAX_WARM_UP_BATCHES} runs; then waits until the compilers are idle (a compilation queued by
     * the last batch would otherwise run inside the first measured window), and prints how many batches it took.
     */
    static void warmUp(String what, int callsPerBatch, Batch batch) throws Exception {
        int runs = 0;
        double share;
        do {
            Window window = new Window();
            batch.run();
            runs++;
            share = window.compileShare();
        } while ((share > SETTLED_COMPILE_SHARE || (long) runs * callsPerBatch < MIN_WARM_UP_CALLS)
                && runs < MAX_WARM_UP_BATCHES);
        long idleAfter = pollUntil(COMPILERS_IDLE_LIMIT_MILLIS, PerfPhases::compilersIdle);
        System.out.printf("rdmarpc-perf: warm-up of %s: %d batches (%d calls), the last %.1f%% compiling%s; compilers"
                        + " idle %d ms later%n", what, runs, (long) runs * callsPerBatch, share * 100,
                share > SETTLED_COMPILE_SHARE ? " (not settled)" : "", idleAfter);
    }

    /**
     * Whether the JIT compilers have nothing to do: no compilation running and both compile queues empty, as the
     * {@code Compiler.queue} diagnostic command reports them.
     */
    private static boolean compilersIdle() {
        String queues;
        try {
            queues = String.valueOf(ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerQueue",
                    new Object[]{new String[0]}, new String[]{String[].class.getName()}));
        } catch (JMException e) {
            throw new IllegalStateException("the Compiler.queue diagnostic command failed", e);
        }
        // every line is a heading ("Current compiles:", "C2 compile queue:") or "Empty" unless a compilation is listed
        return queues.lines().map(String::strip)
                .allMatch(line -> line.isEmpty() || line.endsWith(":") || line.equals("Empty"));
    }

    /**
     * Checks {@code condition} until it holds or {@code limitMillis} have passed (the limit only ends a wait that would
     * not end; the caller prints how long it took); returns the milliseconds waited.
     */
    static long pollUntil(long limitMillis, Condition condition) throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + limitMillis * 1_000_000L;
        while (!condition.holds() && System.nanoTime() < deadline) {
            Thread.sleep(POLL_MILLIS);
        }
        return (System.nanoTime() - t0) / 1_000_000L;
    }

    /** A condition {@link #pollUntil} waits for. */
    interface Condition {
        /** Whether it holds now. */
        boolean holds() throws Exception;
    }

    /**
     * CPU time of this JVM's JIT compiler threads so far: from /proc on Linux (it counts a compilation still running,
     * which {@code CompilationMXBean} counts only once it ends), else the MXBean's compilation time.
     */
    private static long compilerCpuNanos() {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
            return jit.getTotalCompilationTime() * 1_000_000L;
        }
        long ticks = 0;
        try (var threads = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) threads::iterator) {
                try {
                    if (!Files.readString(t.resolve("comm")).contains("CompilerThre")) {
                        continue;
                    }
                    // fields after the parenthesized name: state is 3rd, utime 14th and stime 15th of the whole line
                    String stat = Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                } catch (IOException gone) {
                    // the compiler thread exited between the listing and the read
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ticks * 10_000_000L;   // USER_HZ is 100 on Linux
    }

    /**
     * Marks the start of a measured loop: the profiler, if any, records from here until {@link Measured#close}; with
     * {@code -Drdmarpc.perf.jfr=DIR} a JFR recording of Java execution samples (every millisecond) runs as long, and is
     * written to {@code DIR/measured-N.jfr}.
     */
    Measured measure() {
        command("enable");
        String jfrDir = System.getProperty("rdmarpc.perf.jfr", "");
        Window window = new Window();
        if (jfrDir.isBlank()) {
            return () -> {
                command("disable");
                window.report();
            };
        }
        jdk.jfr.Recording recording = new jdk.jfr.Recording();
        recording.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(1));
        recording.enable("jdk.NativeMethodSample").withPeriod(java.time.Duration.ofMillis(1));
        recording.start();
        return () -> {
            command("disable");
            window.report();
            recording.stop();
            try {
                recording.dump(Path.of(jfrDir, "measured-" + (++recordings) + ".jfr"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                recording.close();
            }
        };
    }

    private void command(String word) {
        if (control == null) {
            return;
        }
        try (OutputStream out = Files.newOutputStream(control)) {
            out.write((word + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("perf control FIFO " + control, e);
        }
        // perf answers "ack\n" and a NUL (it writes the tag with its terminator): skip NULs, stop after the newline
        try (InputStream in = Files.newInputStream(ack)) {
            StringBuilder reply = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                if (b != 0) {
                    reply.append((char) b);
                }
            }
            if (!"ack".contentEquals(reply)) {
                throw new IllegalStateException("perf answered '" + reply + "' to " + word);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("perf ack FIFO " + ack, e);
        }
    }

    /**
     * A measured loop's span: prints when it ran (milliseconds since the JVM started, the time base of
     * {@code -XX:+PrintCompilation}) and which share of it the JIT compilers spent, so a figure taken while the JIT was
     * still busy shows as such.
     */
    private static final class Window {
        private final long startMillis = ManagementFactory.getRuntimeMXBean().getUptime();
        private final long startNanos = System.nanoTime();
        private final long compilingAtStart = compilerCpuNanos();

        /** The share of the time since this window started that the JIT compilers spent. */
        double compileShare() {
            return (compilerCpuNanos() - compilingAtStart) / (double) Math.max(1, System.nanoTime() - startNanos);
        }

        void report() {
            double share = compileShare();
            System.out.printf("rdmarpc-perf: measured from %d to %d ms of uptime, %.1f%% of it compiling%s%n", startMillis,
                    ManagementFactory.getRuntimeMXBean().getUptime(), share * 100,
                    share > SETTLED_COMPILE_SHARE ? " (the JIT was not settled)" : "");
        }
    }

    /** Measured windows per throughput figure: a compilation that still falls into one moves one of them only. */
    static final int WINDOWS = 3;

    /**
     * Runs {@code run} in {@value #WINDOWS} measured windows, one after another ({@link #measure} around each), and
     * returns their figures in the order taken. With a {@link PerftestReference}, perftest runs before the first
     * window and after each, and a line gives each window's figure over the mean of the runs on either side of it.
     */
    double[] measureWindows(String what, Run run) throws Exception {
        double[] figures = new double[WINDOWS];
        double[] references = new double[WINDOWS + 1];
        if (reference != null) {
            references[0] = reference.run();
        }
        for (int i = 0; i < WINDOWS; i++) {
            try (Measured m = measure()) {
                figures[i] = run.figure();
            }
            if (reference != null) {
                references[i + 1] = reference.run();
            }
        }
        if (reference != null) {
            double[] ratios = new double[WINDOWS];
            for (int i = 0; i < WINDOWS; i++) {
                ratios[i] = figures[i] / ((references[i] + references[i + 1]) / 2);
            }
            System.out.printf("rdmarpc-perf: %s against ib_read_bw beside each window: %.2f (windows %s; ib_read_bw %s"
                    + " MB/s before, between and after)%n", what, median(ratios), list(ratios, "%.2f"),
                    list(references, "%.1f"));
        }
        return figures;
    }

    /** The median of {@code figures}. */
    static double median(double[] figures) {
        double[] sorted = figures.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** {@code figures} as "a, b, c", each in {@code format}, for a figure's line. */
    static String list(double[] figures, String format) {
        return Arrays.stream(figures).mapToObj(f -> String.format(format, f)).collect(Collectors.joining(", "));
    }

    /** One measured window's run; returns its figure (MB/s). */
    interface Run {
        /** Makes the window's calls and returns their figure. */
        double figure() throws Exception;
    }

    /** One warm-up batch of calls. */
    interface Batch {
        /** Makes the batch's calls. */
        void run() throws Exception;
    }

    /** A measured loop in progress; closing it stops the profiler's recording. */
    interface Measured extends AutoCloseable {
        @Override
        void close();
    }
}
