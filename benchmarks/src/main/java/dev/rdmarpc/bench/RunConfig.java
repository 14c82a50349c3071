package dev.rdmarpc.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A validated benchmark run.
 *
 * @param transports     transports measured, in this order
 * @param calls          call kinds
 * @param payloads       payload sizes, bytes
 * @param concurrency    concurrency levels
 * @param mode           closed or open loop
 * @param rate           open-loop calls per second (0 in closed mode)
 * @param streamLength   responses per server-stream call
 * @param transportWarmup warmup of each transport before its first cell (JIT compilation)
 * @param warmup         warmup per cell
 * @param duration       measured time per cell (with {@code callsPerCell}, the most a cell's calls may take)
 * @param callsPerCell   calls measured per cell, or 0 to measure for {@code duration}
 * @param out            output folder
 * @param server         "host:port" of a remote server process, or null to start one here
 * @param executors      executor modes each transport is measured in, in this order
 * @param connections    connections per transport
 * @param maxMessage     max message size of the local server and of the clients
 * @param serverTimeout  time the local server JVM has to come up (and a remote one to answer)
 * @param connectTimeout time each transport has to connect and complete a first call
 * @param serverJvmArgs  extra JVM flags for the local server JVM
 * @param serverArgs     extra arguments for the local server command (tests)
 * @param plot           write the PNG and SVG plot
 * @param tls            every transport that can runs with TLS (the benchmark's throwaway certificates); netty-raw is skipped
 * @param warmAllFirst   every transport and executor mode is warmed before any is measured (so the first measured
 *                       does not pay for the cold JVMs alone)
 */
record RunConfig(List<Transport> transports, List<CallKind> calls, List<Integer> payloads, List<Integer> concurrency,
                 LoadMode mode, double rate, int streamLength, Duration transportWarmup, Duration warmup, Duration duration,
                 long callsPerCell, Path out,
                 String server, List<ExecutorMode> executors, int connections, int maxMessage, Duration serverTimeout,
                 Duration connectTimeout, List<String> serverJvmArgs, List<String> serverArgs, boolean plot,
                 boolean tls, boolean warmAllFirst) {

    /** Number of cells the run measures (netty-raw's none with TLS: it has none). */
    int cellCount() {
        int modes = 0;
        for (Transport t : transports) {
            if (tls && t == Transport.NETTY_RAW) {
                continue;
            }
            modes += executorsOf(t).size();
        }
        return modes * calls.size() * payloads.size() * concurrency.size();
    }

    /**
     * The executor modes a transport is measured in: netty-raw has no executor (it always answers on its I/O
     * threads), so it is measured once, as direct.
     */
    List<ExecutorMode> executorsOf(Transport t) {
        return t == Transport.NETTY_RAW ? List.of(ExecutorMode.DIRECT) : executors;
    }
}
