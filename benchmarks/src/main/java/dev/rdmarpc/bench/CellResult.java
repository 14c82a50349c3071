package dev.rdmarpc.bench;

import org.HdrHistogram.Histogram;

/**
 * What one measurement found. Latencies are recorded in nanoseconds; figures are reported in
 * microseconds.
 *
 * @param spec            what was measured
 * @param negotiated      the transport really in use ("tcp", "rdma", "h2", "raw-epoll"…)
 * @param histogram       latencies of the calls completed in the measured window, ns
 * @param calls           calls completed in the window
 * @param errors          calls failed in the window (or during warmup)
 * @param seconds         length of the measured window (shorter than asked when stopped early)
 * @param clientCpuNanos  CPU time of the client JVM during the window, or -1
 * @param serverCpuNanos  CPU time of the server JVM during the window, or -1
 * @param partial         stopped early (Ctrl-C)
 * @param error           the first failure, or null
 */
record CellResult(CellSpec spec, String negotiated, Histogram histogram, long calls, long errors, double seconds,
                  long clientCpuNanos, long serverCpuNanos, boolean partial, String error) {

    /** Latency at this percentile, µs (NaN when nothing completed). */
    double percentileUs(double p) {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getValueAtPercentile(p) / 1000.0;
    }

    double maxUs() {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getMaxValue() / 1000.0;
    }

    double meanUs() {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getMean() / 1000.0;
    }

    double callsPerSecond() {
        return seconds <= 0 ? Double.NaN : calls / seconds;
    }

    /** Payload megabytes (10^6 bytes) per second, both directions together. */
    double megabytesPerSecond() {
        return seconds <= 0 ? Double.NaN : calls * (double) spec.workload().payloadBytesPerCall() / seconds / 1e6;
    }

    /** Client CPU µs per call. */
    double clientCpuUsPerCall() {
        return clientCpuNanos < 0 || calls == 0 ? Double.NaN : clientCpuNanos / 1000.0 / calls;
    }

    /** Server CPU µs per call. */
    double serverCpuUsPerCall() {
        return serverCpuNanos < 0 || calls == 0 ? Double.NaN : serverCpuNanos / 1000.0 / calls;
    }

    /** Cores the client kept busy on average. */
    double clientCores() {
        return clientCpuNanos < 0 || seconds <= 0 ? Double.NaN : clientCpuNanos / 1e9 / seconds;
    }

    /** Cores the server kept busy on average. */
    double serverCores() {
        return serverCpuNanos < 0 || seconds <= 0 ? Double.NaN : serverCpuNanos / 1e9 / seconds;
    }
}
