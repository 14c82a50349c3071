package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.BenchClient;
import dev.rdmarpc.bench.driver.Workload;

import java.time.Duration;
import java.util.Locale;

/**
 * Gets a transport's code compiled before it is measured: its smallest payload at the highest concurrency until the
 * call rate is steady, then briefly its largest payload one call at a time.
 */
final class TransportWarmup {
    /** Longest warmup at the largest payload. */
    private static final Duration LARGEST_WARMUP = Duration.ofMillis(1500);

    private final RunConfig cfg;
    private final StopSignal stop;
    private final Progress progress;

    TransportWarmup(RunConfig cfg, StopSignal stop, Progress progress) {
        this.cfg = cfg;
        this.stop = stop;
        this.progress = progress;
    }

    /** Warms {@code t} through {@code client}, for {@code time} in all (the run's transport warmup). */
    void run(Transport t, ExecutorMode ex, BenchClient client, Duration time) {
        if (time.isZero()) {
            return;
        }
        int conc = cfg.concurrency().stream().mapToInt(Integer::intValue).max().orElse(1);
        int payload = cfg.payloads().stream().mapToInt(Integer::intValue).min().orElse(0);
        Duration each = time.dividedBy(cfg.calls().size());
        for (CallKind kind : cfg.calls()) {
            if (stop.isStopped()) {
                return;
            }
            CellSpec spec = new CellSpec(t, ex, new Workload(kind, payload, cfg.streamLength()), conc, cfg.mode(), cfg.rate(),
                    each, Duration.ZERO, 0);
            progress.status(t + " JIT warmup: " + spec.label());
            CellRunner runner = new CellRunner(spec, client, () -> -1, stop, progress).untilSteady();
            CellResult r = runner.run();
            if (r.error() != null) {
                progress.println("warning: " + t + " failed during its warmup: " + r.error());
            } else if (!stop.isStopped()) {
                long steady = runner.steadyAfterNanos();
                progress.println(String.format(Locale.ROOT, "%-12s warmup (%s, %s): %s", t.cliName(), ex, spec.label(),
                        steady < 0 ? String.format(Locale.ROOT, "not steady after %.1f s (measuring anyway)", each.toMillis() / 1e3)
                                : String.format(Locale.ROOT, "steady after %.1f s", steady / 1e9)));
            }
            largest(t, ex, client, kind, payload, each);
        }
    }

    /**
     * A short run at the largest payload, one call at a time, so that the large-message paths (copies, big buffers,
     * the collector's sizing) are compiled and settled before their cells too, not measured while they warm up.
     */
    private void largest(Transport t, ExecutorMode ex, BenchClient client, CallKind kind, int warmedPayload, Duration each) {
        int largest = cfg.payloads().stream().mapToInt(Integer::intValue).max().orElse(warmedPayload);
        Duration time = each.dividedBy(4);
        if (time.compareTo(LARGEST_WARMUP) > 0) {
            time = LARGEST_WARMUP;
        }
        if (largest == warmedPayload || time.toMillis() < 300 || stop.isStopped()) {
            return;
        }
        CellSpec spec = new CellSpec(t, ex, new Workload(kind, largest, cfg.streamLength()), 1, cfg.mode(), cfg.rate(),
                time, Duration.ZERO, 0);
        progress.status(t + " JIT warmup: " + spec.label());
        CellResult r = new CellRunner(spec, client, () -> -1, stop, progress).run();
        if (r.error() != null) {
            progress.println("warning: " + t + " failed during its warmup: " + r.error());
        } else if (!stop.isStopped()) {
            progress.println(String.format(Locale.ROOT, "%-12s warmup (%s, %s): %.1f s", t.cliName(), ex, spec.label(),
                    time.toMillis() / 1e3));
        }
    }
}
