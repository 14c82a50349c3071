package io.grpc;

import java.util.List;

/**
 * Test access to grpc's provider selection on registries of our own making (its builder methods are
 * package-private), so the tests need not change the JVM-wide default registries grpc loads once.
 */
public final class FreshRegistries {
    private FreshRegistries() {
    }

    /** What {@code Grpc.newChannelBuilder(target, creds)} builds when exactly these providers are registered. */
    public static ManagedChannelBuilder<?> newChannelBuilder(List<ManagedChannelProvider> providers, String target,
                                                             ChannelCredentials creds) {
        ManagedChannelRegistry registry = new ManagedChannelRegistry();
        providers.forEach(registry::register);
        return registry.newChannelBuilder(target, creds);
    }

    /** What {@code Grpc.newServerBuilderForPort(port, creds)} builds when exactly these providers are registered. */
    public static ServerBuilder<?> newServerBuilderForPort(List<ServerProvider> providers, int port,
                                                           ServerCredentials creds) {
        ServerRegistry registry = new ServerRegistry();
        providers.forEach(registry::register);
        return registry.newServerBuilderForPort(port, creds);
    }
}
