package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.Transport;
import dev.rdmarpc.core.TransportMode;

/** Starts the server and connects the client of each {@link Transport}. */
public final class Drivers {
    private Drivers() {
    }

    /**
     * Starts a server of this transport.
     *
     * @throws Exception whatever the framework throws when it cannot start (port in use, no RDMA device…)
     */
    public static BenchServer startServer(Transport t, ServerSettings s) throws Exception {
        return switch (t) {
            case NATIVE -> NativeBenchServer.start(TransportMode.AUTO, s);
            case NATIVE_TCP -> NativeBenchServer.start(TransportMode.TCP, s);
            case NATIVE_RDMA -> NativeBenchServer.start(TransportMode.RDMA, s);
            case GRPC_COMPAT -> GrpcBenchServer.startCompat(s);
            case GRPC_NETTY -> GrpcBenchServer.startNetty(s);
            case NETTY_RAW -> RawNettyServer.start(s);
        };
    }

    /**
     * Connects a client of this transport and completes one call on every connection.
     *
     * @throws dev.rdmarpc.bench.BenchException saying why it could not
     */
    public static BenchClient connect(Transport t, ClientSettings s) {
        return switch (t) {
            case NATIVE -> NativeBenchClient.connect(t.cliName(), TransportMode.AUTO, s);
            case NATIVE_TCP -> NativeBenchClient.connect(t.cliName(), TransportMode.TCP, s);
            case NATIVE_RDMA -> NativeBenchClient.connect(t.cliName(), TransportMode.RDMA, s);
            case GRPC_COMPAT -> GrpcBenchClient.connectCompat(s);
            case GRPC_NETTY -> GrpcBenchClient.connectNetty(s);
            case NETTY_RAW -> RawNettyClient.connect(s);
        };
    }
}
