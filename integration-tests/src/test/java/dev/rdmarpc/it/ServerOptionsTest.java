package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Server and channel options: metrics, executors, forced transports. */
class ServerOptionsTest extends LoopbackTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ExecutorService handlerPool = Executors.newFixedThreadPool(2);

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.meterRegistry(registry).executor(handlerPool);
    }

    @Test
    void callsAreCountedAndTimedPerMethodAndStatus() throws InterruptedException {
        for (int i = 0; i < 5; i++) {
            ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[8]);
        }
        assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(channel, TestService.THROW, CallOptions.DEFAULT, new byte[1]));
        // the server records a call just after its last frame went out, so the client may be told first
        Await.until(() -> {
            Timer t = registry.find("rdmarpc.server.calls").tags("method", "test.TestService/Echo", "status", "OK").timer();
            Timer f = registry.find("rdmarpc.server.calls").tags("method", "test.TestService/Throw", "status", "UNKNOWN").timer();
            return t != null && t.count() == 5 && f != null && f.count() == 1;
        }, () -> "five OK Echo calls and one failed Throw recorded: " + registry.find("rdmarpc.server.calls").timers().stream()
                .map(t -> t.getId() + "=" + t.count()).toList());
        Timer failed = registry.find("rdmarpc.server.calls").tags("method", "test.TestService/Throw", "status", "UNKNOWN").timer();
        assertNotNull(failed);
        assertEquals(1, failed.count());
        assertEquals(1.0, registry.get("rdmarpc.server.connections.active").gauge().value());
        handlerPool.shutdown();
    }

    @Test
    void directExecutorsOnBothSidesWork() throws Exception {
        try (RpcServer direct = RpcServer.forPort(0).addService(service.definition()).directExecutor().build().start();
             RpcChannel ch = RpcChannel.forAddress("127.0.0.1", direct.getPort()).directExecutor().build()) {
            byte[] req = Bytes.pattern(1000, 4);
            assertArrayEquals(req, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, req));
            assertArrayEquals(req, ClientCalls.futureUnaryCall(ch.newCall(TestService.ECHO, CallOptions.DEFAULT), req).get(60, TimeUnit.SECONDS));
        }
        handlerPool.shutdown();
    }

    @Test
    void forcedRdmaWithoutRdmaFailsClearly() throws Exception {
        try (RpcChannel ch = RpcChannel.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.RDMA).build()) {
            StatusException e = assertThrows(StatusException.class,
                    () -> ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, new byte[1]));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("RDMA"), e.getStatus().getDescription());
        }
        assertArrayEquals(new byte[]{1}, ClientCalls.blockingUnaryCall(channel, TestService.ECHO, CallOptions.DEFAULT, new byte[]{1}));
        handlerPool.shutdown();
    }

    @Test
    void forcedTcpStaysOnTcp() {
        try (RpcChannel ch = RpcChannel.forAddress("127.0.0.1", server.getPort()).transportMode(TransportMode.TCP).build()) {
            assertArrayEquals(new byte[]{2}, ClientCalls.blockingUnaryCall(ch, TestService.ECHO, CallOptions.DEFAULT, new byte[]{2}));
            assertEquals("tcp", ch.currentTransport());
        }
        handlerPool.shutdown();
    }
}
