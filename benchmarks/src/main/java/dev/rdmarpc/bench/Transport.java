package dev.rdmarpc.bench;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The transports the harness can measure, by the names used on the command line. */
public enum Transport implements CliNamed {
    /** rdmarpc's native API, RDMA when both sides can and TCP otherwise. */
    NATIVE("rdmarpc native API, RDMA when both sides can, else TCP"),
    /** rdmarpc's native API forced onto TCP. */
    NATIVE_TCP("rdmarpc native API over TCP"),
    /**
     * rdmarpc's native API over TCP with each side receiving through {@code LendingMarshaller}: a large message's
     * payload is lent its receive buffer, released once echoed or counted, instead of copied out of it.
     */
    NATIVE_TCP_LENT("rdmarpc native API over TCP, large messages lent their receive buffers instead of copied"),
    /** rdmarpc's native API forced onto RDMA (fails where there is no RDMA device). */
    NATIVE_RDMA("rdmarpc native API over RDMA"),
    /** grpc-java stubs over rdmarpc's drop-in transport. */
    GRPC_COMPAT("grpc-java stubs over RdmaChannelBuilder/RdmaServerBuilder"),
    /** A mixed fleet: grpc-java stubs over {@code RdmaChannelBuilder} calling a stock grpc-netty server (gRPC over HTTP/2). */
    GRPCCOMPAT_TO_GRPCNETTY("RdmaChannelBuilder client calling a stock grpc-netty server over HTTP/2"),
    /** Stock grpc-java over Netty: the baseline every figure is compared with. */
    GRPC_NETTY("stock grpc-java over Netty (the baseline)"),
    /** A mixed fleet's pairing: a stock grpc-java client over Netty calling rdmarpc's native server over HTTP/2. */
    GRPCNETTY_TO_RDMARPC("stock grpc-java over Netty calling rdmarpc's native RpcServer (gRPC over HTTP/2)"),
    /** A minimal length-prefixed echo over Netty: the floor for TCP. */
    NETTY_RAW("minimal length-prefixed echo over Netty (the TCP floor)");

    private final String description;

    Transport(String description) {
        this.description = description;
    }

    /** One line saying what it is. */
    public String description() {
        return description;
    }

    /** Whether it is one of rdmarpc's own native-API transports. */
    public boolean isNative() {
        return this == NATIVE || this == NATIVE_TCP || this == NATIVE_TCP_LENT || this == NATIVE_RDMA;
    }

    /**
     * The transport of a name as {@link #cliName()} gives it (the control protocol's).
     *
     * @throws IllegalArgumentException naming the valid names
     */
    public static Transport parse(String name) {
        for (Transport t : values()) {
            if (t.cliName().equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + name + "'; valid: "
                + Arrays.stream(values()).map(Transport::cliName).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return cliName();
    }
}
