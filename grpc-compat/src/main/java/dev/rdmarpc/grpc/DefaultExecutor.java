package dev.rdmarpc.grpc;

import dev.rdmarpc.core.CallExecutors;

import java.util.concurrent.Executor;

/** The executor the builders give grpc when the user chose none: rdmarpc's shared one, unless told to keep grpc's. */
final class DefaultExecutor {
    /** System property: {@code grpc} keeps grpc's own default (its cached thread pool) instead of rdmarpc's. */
    static final String PROPERTY = "rdmarpc.grpc.defaultExecutor";

    private DefaultExecutor() {
    }

    /** rdmarpc's shared executor, or null to leave grpc's default in place. */
    static Executor choose() {
        return "grpc".equals(System.getProperty(PROPERTY)) ? null : CallExecutors.shared();
    }
}
