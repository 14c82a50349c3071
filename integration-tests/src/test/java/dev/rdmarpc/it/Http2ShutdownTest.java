package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import org.junit.jupiter.api.Test;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A graceful shutdown reaches HTTP/2 clients as GOAWAY: a call in flight finishes, then the server terminates. */
class Http2ShutdownTest {
    @Test
    void aCallInFlightOnAnHttp2ConnectionFinishesAcrossAGracefulShutdown() throws Exception {
        TestService service = new TestService();
        RpcServer server = RpcServer.forPort(0).addService(service.definition()).build().start();
        ManagedChannel grpc = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).negotiationType(NegotiationType.PLAINTEXT).build();
        try {
            byte[] req = Bytes.pattern(100, 3);
            Future<byte[]> held = ClientCalls.futureUnaryCall(grpc.newCall(StockGrpc.HOLD, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), req);
            assertTrue(service.holdStarted.await(60, TimeUnit.SECONDS), "the call reached its handler");
            server.shutdown();
            service.holdRelease.countDown();
            assertArrayEquals(req, held.get(60, TimeUnit.SECONDS), "the call in flight completed");
            assertTrue(server.awaitTermination(60, TimeUnit.SECONDS), "the server terminated once its calls ended");
        } finally {
            grpc.shutdownNow();
            server.shutdownNow();
        }
    }
}
