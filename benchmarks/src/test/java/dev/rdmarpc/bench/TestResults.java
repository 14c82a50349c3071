package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.Workload;
import org.HdrHistogram.Histogram;

import java.time.Duration;

/** Builds cell results for tests. */
final class TestResults {
    private TestResults() {
    }

    /** A result whose latencies are uniform in [p50/2, p50*1.5] µs, with the given call count over one second. */
    static CellResult of(Transport t, int payload, int conc, double p50Us, long calls) {
        return of(t, ExecutorMode.DIRECT, payload, conc, p50Us, calls);
    }

    /** As {@link #of(Transport, int, int, double, long)}, in the given executor mode. */
    static CellResult of(Transport t, ExecutorMode executor, int payload, int conc, double p50Us, long calls) {
        Histogram h = new Histogram(3);
        long base = (long) (p50Us * 1000);
        for (long i = 0; i < 1000; i++) {
            h.recordValue(base / 2 + i * base / 1000);
        }
        CellSpec spec = new CellSpec(t, executor, new Workload(CallKind.UNARY, payload, 10), conc, LoadMode.CLOSED, 0,
                Duration.ofSeconds(1), Duration.ofSeconds(1), 0);
        return new CellResult(spec, t == Transport.NATIVE ? "tcp" : "x", h, calls, 0, 1.0, calls * 10_000L, calls * 20_000L,
                false, null);
    }
}
