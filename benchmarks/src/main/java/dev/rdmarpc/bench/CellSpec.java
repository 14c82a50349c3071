package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.Workload;

import java.time.Duration;

/**
 * One measurement: a transport under one workload and load.
 *
 * @param transport   what is measured
 * @param executor    where handlers and callbacks run
 * @param workload    call kind, payload size, stream length
 * @param concurrency lanes (concurrent calls in closed mode, streams/workers the schedule is spread over in open mode)
 * @param mode        closed or open loop
 * @param rate        calls per second in open mode (0 in closed mode)
 * @param warmup      time run before measuring
 * @param duration    time measured; with {@code calls} set, the most the counted calls may take
 * @param calls       0 to measure for {@code duration}; otherwise exactly this many calls are sent and measured
 */
record CellSpec(Transport transport, ExecutorMode executor, Workload workload, int concurrency, LoadMode mode, double rate,
                Duration warmup, Duration duration, long calls) {

    /** "unary 64B c=16 direct". */
    String label() {
        return workload.kind() + " " + Sizes.format(workload.payloadSize()) + " c=" + concurrency
                + (mode == LoadMode.OPEN ? " @" + (long) rate + "/s" : "") + " " + executor;
    }
}
