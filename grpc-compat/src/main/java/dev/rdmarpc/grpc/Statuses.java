package dev.rdmarpc.grpc;

import io.grpc.Status;

/** Converts statuses between grpc and rdmarpc: the same codes, with the description (causes stay local). */
final class Statuses {
    private Statuses() {
    }

    static Status toGrpc(dev.rdmarpc.core.Status s) {
        Status g = Status.fromCodeValue(s.getCode().value());
        if (s.getDescription() != null) {
            g = g.withDescription(s.getDescription());
        }
        return s.getCause() != null ? g.withCause(s.getCause()) : g;
    }

    static dev.rdmarpc.core.Status toCore(Status s) {
        return dev.rdmarpc.core.Status.fromCodeValue(s.getCode().value()).withDescription(s.getDescription());
    }
}
