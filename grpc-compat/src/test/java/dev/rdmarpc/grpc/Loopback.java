package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.testing.integration.TestServiceImpl;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/** A grpc test server (grpc's interop TestService) and a channel to it, both over rdmarpc on 127.0.0.1. */
final class Loopback implements AutoCloseable {
    final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);
    final Server server;
    final ManagedChannel channel;

    Loopback(TransportMode mode, UnaryOperator<RdmaServerBuilder> server, UnaryOperator<RdmaChannelBuilder> channel) throws IOException {
        this.server = server.apply(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                        .transportMode(mode)
                        .addService(new TestServiceImpl(executor)))
                .build().start();
        this.channel = channel.apply(RdmaChannelBuilder.forAddress("127.0.0.1", this.server.getPort()).transportMode(mode)).build();
    }

    Loopback(TransportMode mode) throws IOException {
        this(mode, b -> b, b -> b);
    }

    @Override
    public void close() {
        channel.shutdownNow();
        server.shutdownNow();
        try {
            channel.awaitTermination(60, TimeUnit.SECONDS);
            server.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
    }
}
