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
        return t == Transport.NETTY_RAW ? RawNettyServer.start(s) : api(t).serve(s);
    }

    /**
     * Connects a client of this transport and completes one call on every connection.
     *
     * @throws dev.rdmarpc.bench.BenchException saying why it could not
     */
    public static BenchClient connect(Transport t, ClientSettings s) {
        return t == Transport.NETTY_RAW ? RawNettyClient.connect(s) : StubClient.connect(t.cliName(), api(t), s);
    }

    /** The generated API a stub-based transport is measured through. */
    private static StubApi api(Transport t) {
        return switch (t) {
            case NATIVE -> new NativeApi(TransportMode.AUTO);
            case NATIVE_TCP -> new NativeApi(TransportMode.TCP);
            case NATIVE_TCP_LENT -> new NativeApi(TransportMode.TCP, true);
            case NATIVE_RDMA -> new NativeApi(TransportMode.RDMA);
            case GRPC_COMPAT -> GrpcApi.COMPAT;
            case GRPC_NETTY -> GrpcApi.NETTY;
            case GRPCNETTY_TO_RDMARPC -> new Pairing(GrpcApi.NETTY, new NativeApi(TransportMode.TCP));
            case GRPCCOMPAT_TO_GRPCNETTY -> GrpcApi.COMPAT_TO_NETTY;
            case NETTY_RAW -> throw new IllegalArgumentException("netty-raw has no generated API");
        };
    }
}
