package dev.rdmarpc.bench.driver;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.TransportMode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** The benchmark service on an rdmarpc {@link RpcServer}. */
final class NativeBenchServer implements BenchServer {
    private final RpcServer server;

    private NativeBenchServer(RpcServer server) {
        this.server = server;
    }

    static NativeBenchServer start(TransportMode mode, ServerSettings s) throws IOException {
        RpcServer.Builder b = RpcServer.forAddress(new InetSocketAddress(s.bindHost(), s.port()))
                .addService(new NativeBenchService(s.maxMessage()))
                .maxInboundMessageSize(s.maxMessage())
                .transportMode(mode);
        if (s.directExecutor()) {
            b.directExecutor();
        }
        return new NativeBenchServer(b.build().start());
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
