package dev.rdmarpc.bench.driver;

import dev.rdmarpc.grpc.RdmaServerBuilder;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.netty.NettyServerBuilder;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** The benchmark service on a grpc-java {@link Server}: stock Netty, or rdmarpc's drop-in transport. */
final class GrpcBenchServer implements BenchServer {
    private final Server server;

    private GrpcBenchServer(Server server) {
        this.server = server;
    }

    /** Stock grpc-java over Netty, with its default settings apart from the message size and executor. */
    static GrpcBenchServer startNetty(ServerSettings s) throws IOException {
        return start(NettyServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port())), s);
    }

    /** grpc-java over rdmarpc ({@code dev.rdmarpc.grpc.RdmaServerBuilder}). */
    static GrpcBenchServer startCompat(ServerSettings s) throws IOException {
        return start(RdmaServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port())), s);
    }

    private static GrpcBenchServer start(ServerBuilder<?> b, ServerSettings s) throws IOException {
        b.addService(new GrpcBenchService(s.maxMessage())).maxInboundMessageSize(s.maxMessage());
        if (s.directExecutor()) {
            b.directExecutor();
        }
        return new GrpcBenchServer(b.build().start());
    }

    @Override
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
