package dev.rdmarpc.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ManagedChannelProvider;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;

/**
 * grpc's channel provider for rdmarpc ({@code ServiceLoader}): {@code Grpc.newChannelBuilder} builds an
 * {@link RdmaChannelBuilder} when rdmarpc is chosen, see {@code -Drdmarpc.grpc.provider=prefer} in the module README.
 */
public final class RdmaChannelProvider extends ManagedChannelProvider {
    private final ProviderChoice choice;

    /** The provider as this JVM's {@code rdmarpc.grpc.provider} / {@code RDMARPC_GRPC_PROVIDER} setting chooses it. */
    public RdmaChannelProvider() {
        this(ProviderChoice.current());
    }

    RdmaChannelProvider(ProviderChoice choice) {
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
    protected ManagedChannelBuilder<?> builderForAddress(String name, int port) {
        return RdmaChannelBuilder.forAddress(name, port);
    }

    @Override
    protected ManagedChannelBuilder<?> builderForTarget(String target) {
        return RdmaChannelBuilder.forTarget(target);
    }

    @Override
    protected NewChannelBuilderResult newChannelBuilder(String target, ChannelCredentials creds) {
        try {
            return NewChannelBuilderResult.channelBuilder(RdmaChannelBuilder.forTarget(target, creds));
        } catch (IllegalArgumentException e) {
            return NewChannelBuilderResult.error(e.getMessage());
        }
    }

    @Override
    protected Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
