package dev.rdmarpc.grpc;

import io.grpc.ForwardingServerBuilder;
import io.grpc.Server;
import io.grpc.ServerBuilder;

/** Wraps a server builder and keeps the server it builds, so a test can ask it for its port. */
final class CapturingServerBuilder extends ForwardingServerBuilder<CapturingServerBuilder> {
    private final ServerBuilder<?> delegate;
    private volatile Server server;

    CapturingServerBuilder(ServerBuilder<?> delegate) {
        this.delegate = delegate;
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }

    @Override
    public Server build() {
        Server s = super.build();
        server = s;
        return s;
    }

    /** The port of the server built (and started) from this builder. */
    int port() {
        return server.getPort();
    }
}
