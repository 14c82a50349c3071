package dev.rdmarpc.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;

/** The benchmark run: options, validation, and the hand-over to {@link BenchRun}. */
@Command(name = "rdmarpc-bench", mixinStandardHelpOptions = true, version = "rdmarpc-bench 0.2.0",
        sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Measures rdmarpc against stock grpc-java and raw Netty: the server runs in a separate JVM (started here on",
            "127.0.0.1, or a remote one started with the 'server' subcommand), the calls are driven from this JVM.",
            "Writes results.json, results.txt, one .hgrm per cell and latency.png/.svg into --out."},
        subcommands = {ServerCommand.class, JmhCommand.class, CompareCommand.class},
        footer = {"", "Exit codes: 0 all measured; 2 bad input; 3 a transport or cell failed; 130 stopped (Ctrl-C, results still written)."})
public final class RunCommand implements Callable<Integer> {
    /** Default transports: everything that runs on any machine. */
    static final String DEFAULT_TRANSPORTS = "native,grpc-compat,grpc-netty,netty-raw";

    @Spec
    CommandSpec spec;

    @Option(names = "--transports", split = ",", paramLabel = "NAME", defaultValue = DEFAULT_TRANSPORTS,
            description = "Transports to measure, in this order: native (rdmarpc, RDMA when possible else TCP), native-tcp, "
                    + "native-tcp-lent (native-tcp, large messages lent their receive buffers, not copied), native-rdma, grpc-compat, "
                    + "grpc-netty (the baseline), grpcnetty-to-rdmarpc (a stock grpc-netty client, "
                    + "rdmarpc's server, HTTP/2), netty-raw (the TCP floor). Default: ${DEFAULT-VALUE}.")
    List<Transport> transports;

    @Option(names = "--payload", split = ",", paramLabel = "SIZE", converter = Converters.SizeConverter.class,
            defaultValue = "64,4096,1048576", description = "Payload sizes (64, 4k, 1m…). Default: ${DEFAULT-VALUE}.")
    List<Integer> payloads;

    @Option(names = "--concurrency", split = ",", paramLabel = "N", defaultValue = "1,64",
            description = "Concurrent calls (closed loop) or lanes the schedule is spread over (open loop). Default: ${DEFAULT-VALUE}.")
    List<Integer> concurrency;

    @Option(names = "--mode", paramLabel = "closed|open", defaultValue = "closed",
            description = "closed: each lane sends its next call when the last one completes; open: calls are sent at --rate "
                    + "and latency is measured from each call's intended send time (no coordinated omission). Default: ${DEFAULT-VALUE}.")
    LoadMode mode;

    @Option(names = "--rate", paramLabel = "CALLS/S", description = "Calls per second in open mode (all lanes together).")
    Double rate;

    @Option(names = "--call", split = ",", paramLabel = "KIND", defaultValue = "unary",
            description = "unary (payload echoed), server-stream (--stream-length responses of the payload size), "
                    + "bidi (one round trip on a long-lived stream). Default: ${DEFAULT-VALUE}.")
    List<CallKind> calls;

    @Option(names = "--stream-length", paramLabel = "N", defaultValue = "10",
            description = "Responses per server-stream call. Default: ${DEFAULT-VALUE}.")
    int streamLength;

    @Option(names = "--transport-warmup", paramLabel = "TIME", converter = Converters.DurationConverter.class, defaultValue = "10s",
            description = "Most time each transport warms up before its first cell (its smallest payload at the highest "
                    + "concurrency) so its code is compiled; it ends earlier once three one-second call rates agree within 5%%. "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration transportWarmup;

    @Option(names = "--warmup", paramLabel = "TIME", converter = Converters.DurationConverter.class, defaultValue = "0.5s",
            description = "Warmup before each measurement. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "TIME", converter = Converters.DurationConverter.class, defaultValue = "2s",
            description = "Measured time per transport, payload and concurrency. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--calls", paramLabel = "N",
            description = "Measure each cell for exactly N calls instead of a time window; --duration is then the most they may "
                    + "take (a cell that does not finish them in time fails).")
    Long callsPerCell;

    @Option(names = "--quick", description = "A smoke run (well under 40 s): payloads 64,64k; concurrency 1,16; transport "
            + "warmup 1.5 s; warmup 0.3 s; duration 1 s; --no-warm-all (options given explicitly still win).")
    boolean quick;

    @Option(names = "--no-warm-all", description = "Do not warm every transport before any is measured (by default they all "
            + "are, so that the first measured does not pay for the cold JVMs alone); each still warms before its own cells.")
    boolean noWarmAll;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "bench-results",
            description = "Output folder. Default: ${DEFAULT-VALUE}.")
    Path out;

    @Option(names = "--server", paramLabel = "HOST:PORT",
            description = "Drive a remote server process (started there with: rdmarpc-bench server --port PORT) instead of starting one here.")
    String server;

    @Option(names = "--executor", split = ",", paramLabel = "direct|default", defaultValue = "direct,default",
            description = "Executor modes, each transport measured in each: direct: handlers and callbacks run on the I/O "
                    + "threads (all transports); default: each framework's default executor. Default: ${DEFAULT-VALUE} "
                    + "(--quick: direct).")
    List<String> executor;

    @Option(names = "--tls",
            description = "Run every transport that can with TLS (native, native-tcp, grpc-compat, grpc-netty; native-rdma "
                    + "authenticates with TLS and then carries the calls on RDMA unencrypted), with throwaway certificates "
                    + "shipped in the jar; netty-raw is skipped.")
    boolean tls;

    @Option(names = "--connections", paramLabel = "N", defaultValue = "1",
            description = "Connections (channels) per transport; lanes are spread over them. Default: ${DEFAULT-VALUE}.")
    int connections;

    @Option(names = "--max-message", paramLabel = "SIZE", converter = Converters.SizeConverter.class, defaultValue = "4m",
            description = "Max message size of the local server and of the clients (all transports). Default: ${DEFAULT-VALUE}.")
    int maxMessage;

    @Option(names = "--server-timeout", paramLabel = "TIME", converter = Converters.DurationConverter.class, defaultValue = "30s",
            description = "Time the server JVM has to come up (or a remote server to answer). Default: ${DEFAULT-VALUE}.")
    Duration serverTimeout;

    @Option(names = "--connect-timeout", paramLabel = "TIME", converter = Converters.DurationConverter.class, defaultValue = "10s",
            description = "Time each transport has to connect and complete a first call. Default: ${DEFAULT-VALUE}.")
    Duration connectTimeout;

    @Option(names = "--server-jvm-args", paramLabel = "FLAGS",
            description = "Extra JVM flags for the local server JVM (it already gets this JVM's flags).")
    String serverJvmArgs;

    @Option(names = "--no-plot", description = "Skip the PNG/SVG plot.")
    boolean noPlot;

    @Option(names = "--server-arg", hidden = true, paramLabel = "ARG", description = "Extra argument for the local server command (tests).")
    List<String> serverArgs = new ArrayList<>();

    @Override
    public Integer call() {
        return new BenchRun(config(), System.out, System.err).execute();
    }

    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    /**
     * The validated run.
     *
     * @throws BenchException (bad input) naming the first bad option
     */
    RunConfig config() {
        List<Integer> pay = payloads;
        List<Integer> conc = concurrency;
        Duration wu = warmup;
        Duration twu = transportWarmup;
        Duration dur = duration;
        if (quick) {
            pay = given("--payload") ? pay : List.of(64, 64 * 1024);
            conc = given("--concurrency") ? conc : List.of(1, 16);
            wu = given("--warmup") ? wu : Duration.ofMillis(300);
            twu = given("--transport-warmup") ? twu : Duration.ofMillis(1500);
            dur = given("--duration") ? dur : Duration.ofSeconds(1);
        }
        List<ExecutorMode> executors = new ArrayList<>();
        for (String name : quick && !given("--executor") ? List.of("direct") : executor) {
            ExecutorMode m = executorMode(name);
            if (!executors.contains(m)) {
                executors.add(m);
            }
        }
        for (int c : conc) {
            require(c >= 1 && c <= 100_000, "--concurrency must be between 1 and 100000, got " + c);
        }
        require(!dur.isZero(), "--duration must be positive");
        require(callsPerCell == null || callsPerCell >= 1, "--calls must be at least 1");
        require(streamLength >= 1 && streamLength <= 1_000_000, "--stream-length must be between 1 and 1000000");
        require(connections >= 1 && connections <= 1024, "--connections must be between 1 and 1024");
        require(maxMessage >= 1024, "--max-message must be at least 1k");
        double r = 0;
        if (mode == LoadMode.OPEN) {
            require(rate != null, "--mode open needs --rate CALLS/S");
            require(rate > 0 && rate <= 10_000_000, "--rate must be between 0 and 10000000 calls/s");
            r = rate;
        } else {
            require(rate == null, "--rate only applies to --mode open");
        }
        if (server != null) {
            HostPort.parse(server);
            require(serverJvmArgs == null, "--server-jvm-args only applies to a local server; pass JVM flags where the remote server starts");
        }
        List<String> jvmArgs = serverJvmArgs == null || serverJvmArgs.isBlank() ? List.of() : List.of(serverJvmArgs.trim().split("\\s+"));
        return new RunConfig(List.copyOf(new LinkedHashSet<>(transports)), List.copyOf(new LinkedHashSet<>(calls)),
                List.copyOf(new LinkedHashSet<>(pay)), List.copyOf(new LinkedHashSet<>(conc)), mode, r, streamLength, twu, wu, dur,
                callsPerCell == null ? 0 : callsPerCell, out, server, List.copyOf(executors), connections, maxMessage, serverTimeout, connectTimeout, jvmArgs,
                List.copyOf(serverArgs), !noPlot, tls, !noWarmAll && !quick);
    }

    private static ExecutorMode executorMode(String name) {
        for (ExecutorMode m : ExecutorMode.values()) {
            if (m.cliName().equalsIgnoreCase(name.trim())) {
                return m;
            }
        }
        throw new BenchException(BenchException.BAD_INPUT, "--executor takes direct, default or both (direct,default), got '" + name + "'");
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new BenchException(BenchException.BAD_INPUT, message);
        }
    }
}
