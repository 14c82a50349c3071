package dev.rdmarpc.grpc;

import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import io.grpc.ServerProvider;

/**
 * grpc's server provider for rdmarpc ({@code ServiceLoader}): {@code Grpc.newServerBuilderForPort} builds an
 * {@link RdmaServerBuilder} when rdmarpc is chosen, see {@code -Drdmarpc.grpc.provider=prefer} in the module README.
 */
public final class RdmaServerProvider extends ServerProvider {
    private final ProviderChoice choice;

    /** The provider as this JVM's {@code rdmarpc.grpc.provider} / {@code RDMARPC_GRPC_PROVIDER} setting chooses it. */
    public RdmaServerProvider() {
        this(ProviderChoice.current());
    }

    RdmaServerProvider(ProviderChoice choice) {
        this.choice = choice;
    }

    @Override
    protected boolean isAvailable() {
        return choice.available();
    }

    @Override
    protected int priority() {
        return choice.priority();
    }

    @Override
    protected ServerBuilder<?> builderForPort(int port) {
        return RdmaServerBuilder.forPort(port);
    }

    @Override
    protected NewServerBuilderResult newServerBuilderForPort(int port, ServerCredentials creds) {
        try {
            return NewServerBuilderResult.serverBuilder(RdmaServerBuilder.forPort(port, creds));
        } catch (IllegalArgumentException e) {
            return NewServerBuilderResult.error(e.getMessage());
        }
    }
}
