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

    private final Set<String> phases;
    private final Path control;
    private final Path ack;
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
     * Runs {@code batch} until one run of it spent at most {@link #SETTLED_COMPILE_SHARE} of its time compiling, or
     * {@link #MAX_WARM_UP_BATCHES} runs; prints how many it took.
     */
    static void warmUp(String what, Batch batch) throws Exception {
        int runs = 0;
        double share;
        do {
            long compiling = compilerCpuNanos();
            long t0 = System.nanoTime();
            batch.run();
            runs++;
            share = (compilerCpuNanos() - compiling) / (double) Math.max(1, System.nanoTime() - t0);
        } while (share > SETTLED_COMPILE_SHARE && runs < MAX_WARM_UP_BATCHES);
        System.out.printf("rdmarpc-perf: warm-up of %s: %d batches, the last %.1f%% compiling%s%n", what, runs,
                share * 100, share > SETTLED_COMPILE_SHARE ? " (not settled)" : "");
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
        if (jfrDir.isBlank()) {
            return () -> command("disable");
        }
        jdk.jfr.Recording recording = new jdk.jfr.Recording();
        recording.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(1));
        recording.enable("jdk.NativeMethodSample").withPeriod(java.time.Duration.ofMillis(1));
        recording.start();
        return () -> {
            command("disable");
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
