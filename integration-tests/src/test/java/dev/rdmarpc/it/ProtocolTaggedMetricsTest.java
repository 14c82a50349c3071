package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.testing.Await;
import io.grpc.ManagedChannel;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A server's call metrics carry the protocol of each call's connection in the {@code transport} tag, as its
 * connection counts do: calls from an rdmarpc channel count under {@code tcp}, calls from a stock grpc-java channel
 * (gRPC over HTTP/2 on the same port) under {@code h2}.
 */
class ProtocolTaggedMetricsTest {

    @Test
    void rdmarpcAndHttp2CallsAreCountedUnderTheirProtocol() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RpcServer server = RpcServer.forPort(0).addService(new TestService().definition()).meterRegistry(registry).build().start();
        RpcChannel rdmarpc = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        ManagedChannel h2 = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .negotiationType(NegotiationType.PLAINTEXT).build();
        String echo = TestService.ECHO.getFullMethodName();
        try {
            for (int i = 0; i < 2; i++) {
                byte[] req = Bytes.pattern(100, i);
                assertArrayEquals(req, ClientCalls.blockingUnaryCall(rdmarpc, TestService.ECHO,
                        CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), req));
            }
            for (int i = 0; i < 3; i++) {
                byte[] req = Bytes.pattern(100, -i);
                assertArrayEquals(req, StockGrpc.echo(h2, req));
            }
            assertEquals(2, started(registry, echo, "tcp").count());
            assertEquals(3, started(registry, echo, "h2").count());
            // a call's latency is recorded as its stream leaves the server, which can come after the client has the answer
            Await.until(() -> finished(registry, echo, "tcp") == 2 && finished(registry, echo, "h2") == 3,
                    () -> "2 tcp and 3 h2 calls timed, not " + finished(registry, echo, "tcp") + " and "
                            + finished(registry, echo, "h2"));
        } finally {
            rdmarpc.shutdownNow();
            h2.shutdownNow();
            h2.awaitTermination(60, TimeUnit.SECONDS);
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    private static Counter started(SimpleMeterRegistry registry, String method, String transport) {
        Counter c = registry.find("rdmarpc.server.calls.started").tags("method", method, "transport", transport).counter();
        assertNotNull(c, "calls.started for " + method + " over " + transport);
        return c;
    }

    private static long finished(SimpleMeterRegistry registry, String method, String transport) {
        Timer t = registry.find("rdmarpc.server.calls").tags("method", method, "transport", transport, "status", "OK").timer();
        return t == null ? 0 : t.count();
    }
}
