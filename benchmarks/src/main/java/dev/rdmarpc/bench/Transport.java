package dev.rdmarpc.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The transports the harness can measure, by the names used on the command line. */
public enum Transport {
    /** rdmarpc's native API, RDMA when both sides can and TCP otherwise. */
    NATIVE("native", "rdmarpc native API, RDMA when both sides can, else TCP"),
    /** rdmarpc's native API forced onto TCP. */
    NATIVE_TCP("native-tcp", "rdmarpc native API over TCP"),
    /** rdmarpc's native API forced onto RDMA (fails where there is no RDMA device). */
    NATIVE_RDMA("native-rdma", "rdmarpc native API over RDMA"),
    /** grpc-java stubs over rdmarpc's drop-in transport. */
    GRPC_COMPAT("grpc-compat", "grpc-java stubs over RdmaChannelBuilder/RdmaServerBuilder"),
    /** Stock grpc-java over Netty: the baseline every figure is compared with. */
    GRPC_NETTY("grpc-netty", "stock grpc-java over Netty (the baseline)"),
    /** A minimal length-prefixed echo over Netty: the floor for TCP. */
    NETTY_RAW("netty-raw", "minimal length-prefixed echo over Netty (the TCP floor)");

    private final String cliName;
    private final String description;

    Transport(String cliName, String description) {
        this.cliName = cliName;
        this.description = description;
    }

    /** The name used on the command line and in results. */
    public String cliName() {
        return cliName;
    }

    /** One line saying what it is. */
    public String description() {
        return description;
    }

    /** Whether it is one of rdmarpc's own native-API transports. */
    public boolean isNative() {
        return this == NATIVE || this == NATIVE_TCP || this == NATIVE_RDMA;
    }

    /**
     * The transport of a command-line name.
     *
     * @throws IllegalArgumentException naming the valid names
     */
    public static Transport parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Transport t : values()) {
            if (t.cliName.equals(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + name + "'; valid: " + names());
    }

    /** The valid names, comma separated. */
    public static String names() {
        return Arrays.stream(values()).map(Transport::cliName).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return cliName;
    }
}
