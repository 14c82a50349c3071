package dev.rdmarpc.grpc;

import io.grpc.Attributes;

/** Attributes rdmarpc adds to grpc calls ({@code ClientCall.getAttributes()}, {@code ServerCall.getAttributes()}). */
public final class RdmaAttributes {
    /** The transport carrying the call's connection: "tcp" or "rdma". */
    public static final Attributes.Key<String> TRANSPORT = Attributes.Key.create("dev.rdmarpc.transport");

    private RdmaAttributes() {
    }
}
