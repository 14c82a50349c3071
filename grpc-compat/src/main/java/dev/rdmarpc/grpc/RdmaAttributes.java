package dev.rdmarpc.grpc;

import io.grpc.Attributes;

/** Attributes rdmarpc adds to grpc calls ({@code ClientCall.getAttributes()}, {@code ServerCall.getAttributes()}). */
public final class RdmaAttributes {
    /**
     * The transport carrying the call's connection: "tcp" or "rdma" for rdmarpc's protocol, "h2" on a server for a call
     * from a standard gRPC client. Absent on a channel's calls to a standard gRPC server, which grpc-netty's transport
     * carries.
     */
    public static final Attributes.Key<String> TRANSPORT = Attributes.Key.create("dev.rdmarpc.transport");

    private RdmaAttributes() {
    }
}
