package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** A server on a free loopback port serving some services, and a channel to it; closing shuts both down and waits. */
public final class Loopback implements AutoCloseable {
    private final RpcServer server;
    private final RpcChannel channel;

    private Loopback(RpcServer server) {
        this.server = server;
        this.channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    /** Starts a server with these services and opens a channel to it. */
    public static Loopback serve(BindableService... services) throws IOException {
        RpcServer.Builder builder = RpcServer.forPort(0);
        for (BindableService s : services) {
            builder.addService(s);
        }
        return new Loopback(builder.build().start());
    }

    /** The channel to the server. */
    public RpcChannel channel() {
        return channel;
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
            throw new IllegalStateException("interrupted while waiting for the loopback server and channel to stop", e);
        }
    }
}
