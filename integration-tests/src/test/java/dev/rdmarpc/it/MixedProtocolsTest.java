package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One server, both protocols at once: rdmarpc channels and stock grpc-java (HTTP/2) channels call the same port
 * concurrently, interleaved, each checking that every answer is its own (payloads differ per client and call).
 */
class MixedProtocolsTest {
    private static final int CLIENTS_PER_PROTOCOL = 4;
    private static final int CALLS = 300;

    @Test
    void rdmarpcAndHttp2ClientsUnderLoadOnOnePort() throws Exception {
        long baseline = SlabPool.shared().inUseBuffers();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RpcServer server = RpcServer.forPort(0).addService(new TestService().definition()).meterRegistry(registry).build().start();
        List<RpcChannel> rdmarpc = new ArrayList<>();
        List<ManagedChannel> grpc = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(2 * CLIENTS_PER_PROTOCOL);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int c = 0; c < CLIENTS_PER_PROTOCOL; c++) {
                RpcChannel r = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
                ManagedChannel g = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                        .negotiationType(NegotiationType.PLAINTEXT).build();
                rdmarpc.add(r);
                grpc.add(g);
                int seedBase = c * 1_000_000;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < CALLS; i++) {
                        byte[] req = Bytes.pattern(64 + (i % 7) * 1000, seedBase + i);
                        assertArrayEquals(req, ClientCalls.blockingUnaryCall(r, TestService.ECHO, CallOptions.DEFAULT, req));
                    }
                    return CALLS;
                }));
                done.add(pool.submit(() -> {
                    for (int i = 0; i < CALLS; i++) {
                        byte[] req = Bytes.pattern(64 + (i % 5) * 3000, -seedBase - i - 1);
                        assertArrayEquals(req, StockGrpc.echo(g, req));
                        if (i % 50 == 0) {
                            int n = 0;
                            for (Iterator<byte[]> it = StockGrpc.stream(g, 20, 20_000); it.hasNext(); n++) {
                                assertArrayEquals(Bytes.pattern(20_000, n), it.next());
                            }
                            assertEquals(20, n);
                        }
                    }
                    return CALLS;
                }));
            }
            for (Future<Integer> f : done) {
                assertEquals(CALLS, f.get(5, TimeUnit.MINUTES));
            }
            assertEquals(2 * CLIENTS_PER_PROTOCOL, server.connectionCount());
            assertEquals(CLIENTS_PER_PROTOCOL, registry.get("rdmarpc.server.connections.opened").tag("transport", "h2").counter().count(),
                    "the metrics tell the protocols apart");
            assertEquals(CLIENTS_PER_PROTOCOL, registry.get("rdmarpc.server.connections.opened").tag("transport", "tcp").counter().count());
        } finally {
            pool.shutdownNow();
            rdmarpc.forEach(RpcChannel::shutdownNow);
            grpc.forEach(ManagedChannel::shutdownNow);
            for (ManagedChannel g : grpc) {
                g.awaitTermination(60, TimeUnit.SECONDS);
            }
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }
}
