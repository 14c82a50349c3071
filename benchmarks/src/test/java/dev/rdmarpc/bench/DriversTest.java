package dev.rdmarpc.bench;

import dev.rdmarpc.bench.driver.BenchClient;
import dev.rdmarpc.bench.driver.BenchServer;
import dev.rdmarpc.bench.driver.ClientSettings;
import dev.rdmarpc.bench.driver.Drivers;
import dev.rdmarpc.bench.driver.ServerSettings;
import dev.rdmarpc.bench.driver.Workload;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every transport's server and client, in this JVM over loopback, under every call kind and both load modes. */
class DriversTest {
    private static final int MAX = 4 << 20;
    /** Calls each cell sends and measures. */
    private static final long CALLS = 200;
    /** Open-loop calls per second. */
    private static final double RATE = 2000;
    /** Only ends a hung cell: on any machine the calls finish long before. */
    private static final Duration HUNG = Duration.ofSeconds(60);

    static Stream<Arguments> cells() {
        List<Arguments> a = new ArrayList<>();
        for (Transport t : List.of(Transport.NATIVE, Transport.NATIVE_TCP, Transport.NATIVE_TCP_LENT, Transport.GRPC_COMPAT, Transport.GRPC_NETTY,
                Transport.GRPCNETTY_TO_RDMARPC, Transport.GRPCCOMPAT_TO_GRPCNETTY,
                Transport.NETTY_RAW)) {
            for (CallKind k : CallKind.values()) {
                a.add(Arguments.of(t, k, LoadMode.CLOSED));
            }
            a.add(Arguments.of(t, CallKind.UNARY, LoadMode.OPEN));
            a.add(Arguments.of(t, CallKind.BIDI, LoadMode.OPEN));
        }
        return a.stream();
    }

    /** --tls: each stub transport serves and calls over TLS with the shipped throwaway certificates. */
    @ParameterizedTest(name = "{0} over TLS")
    @EnumSource(value = Transport.class, names = {"NATIVE", "NATIVE_TCP", "GRPC_COMPAT", "GRPC_NETTY", "GRPCNETTY_TO_RDMARPC", "GRPCCOMPAT_TO_GRPCNETTY"})
    void measuresCallsOverTls(Transport t) throws Exception {
        try (BenchServer server = Drivers.startServer(t, new ServerSettings("127.0.0.1", 0, MAX, true, true));
             BenchClient client = Drivers.connect(t, new ClientSettings("127.0.0.1", server.port(), MAX, true, 1, Duration.ofSeconds(10), true))) {
            CellSpec spec = new CellSpec(t, ExecutorMode.DIRECT, new Workload(CallKind.UNARY, 4096, 3), 4, LoadMode.CLOSED, 0, Duration.ZERO, HUNG, CALLS);
            CellResult r;
            try (Progress p = new Progress(System.err, false, 1)) {
                r = new CellRunner(spec, client, () -> -1, new StopSignal(), p).run();
            }
            assertNull(r.error(), r.error());
            assertEquals(0, r.errors());
            assertEquals(CALLS, r.calls());
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cells")
    void measuresCallsWithoutErrors(Transport t, CallKind kind, LoadMode mode) throws Exception {
        try (BenchServer server = Drivers.startServer(t, new ServerSettings("127.0.0.1", 0, MAX, true, false));
             BenchClient client = Drivers.connect(t, new ClientSettings("127.0.0.1", server.port(), MAX, true, 2, Duration.ofSeconds(10), false))) {
            // open loop at a rate every transport sustains here; closed loop with messages that take two frames
            int payload = kind == CallKind.SERVER_STREAM || mode == LoadMode.OPEN ? 1000 : 100_000;
            double rate = mode == LoadMode.OPEN ? RATE : 0;
            CellSpec spec = new CellSpec(t, ExecutorMode.DIRECT, new Workload(kind, payload, 3), 4, mode, rate, Duration.ZERO, HUNG, CALLS);
            CellResult r;
            try (Progress p = new Progress(System.err, false, 1)) {
                r = new CellRunner(spec, client, () -> -1, new StopSignal(), p).run();
            }
            assertNull(r.error(), r.error());
            assertEquals(0, r.errors());
            assertFalse(r.partial());
            assertEquals(CALLS, r.calls());
            assertEquals(CALLS, r.histogram().getTotalCount());
            assertTrue(r.percentileUs(50) > 0);
            assertTrue(r.seconds() > 0);
            if (mode == LoadMode.OPEN) {
                // the last of the calls is due (CALLS - 1) / RATE seconds after the first: never sooner
                double most = RATE * CALLS / (CALLS - 1);
                assertTrue(r.callsPerSecond() <= most * (1 + 1e-9), "open loop ran faster than its rate: " + r.callsPerSecond());
            }
        }
    }

    @Test
    void countedCallsAfterAWarmupAreExactlyThoseAskedFor() throws Exception {
        Transport t = Transport.NETTY_RAW;
        try (BenchServer server = Drivers.startServer(t, new ServerSettings("127.0.0.1", 0, MAX, true, false));
             BenchClient client = Drivers.connect(t, new ClientSettings("127.0.0.1", server.port(), MAX, true, 1, Duration.ofSeconds(10), false))) {
            CellSpec spec = new CellSpec(t, ExecutorMode.DIRECT, new Workload(CallKind.UNARY, 64, 1), 3, LoadMode.CLOSED, 0,
                    Duration.ofMillis(50), HUNG, 7);
            CellResult r;
            try (Progress p = new Progress(System.err, false, 1)) {
                r = new CellRunner(spec, client, () -> -1, new StopSignal(), p).run();
            }
            assertNull(r.error(), r.error());
            assertEquals(7, r.calls());
            assertEquals(7, r.histogram().getTotalCount());
        }
    }

    @Test
    void nothingListeningIsAClearFailure() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        for (Transport t : List.of(Transport.NATIVE_TCP, Transport.GRPC_COMPAT, Transport.GRPC_NETTY, Transport.NETTY_RAW)) {
            BenchException e = assertThrows(BenchException.class, () -> Drivers.connect(t,
                    new ClientSettings("127.0.0.1", port, MAX, true, 1, Duration.ofSeconds(3), false)));
            assertTrue(e.getMessage().startsWith(t.cliName() + ": "), e.getMessage());
            assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
        }
    }
}
