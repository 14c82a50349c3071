package dev.rdmarpc.health;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.health.v1.HealthCheckRequest;
import dev.rdmarpc.health.v1.HealthCheckResponse;
import dev.rdmarpc.health.v1.HealthCheckResponse.ServingStatus;
import dev.rdmarpc.health.v1.HealthRpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The health service on a real server, asked by an rdmarpc channel over loopback TCP. */
class HealthServiceTest {
    private final HealthService health = new HealthService();
    private RpcServer server;
    private RpcChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = RpcServer.forPort(0).addService(health).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
    }

    private static HealthCheckRequest ask(String service) {
        return HealthCheckRequest.newBuilder().setService(service).build();
    }

    @Test
    void checkAnswersEachServicesStatusAndNotFoundForAnUnknownOne() throws Exception {
        HealthRpc.HealthBlockingStub stub = HealthRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertEquals(ServingStatus.SERVING, stub.check(ask("")).getStatus(), "the server as a whole starts SERVING");
        StatusException e = assertThrows(StatusException.class, () -> stub.check(ask("kv")));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        health.setStatus("kv", ServingStatus.NOT_SERVING);
        assertEquals(ServingStatus.NOT_SERVING, stub.check(ask("kv")).getStatus());
        health.setStatus("kv", ServingStatus.SERVING);
        assertEquals(ServingStatus.SERVING, stub.check(ask("kv")).getStatus());
        health.clearStatus("kv");
        assertEquals(Status.Code.NOT_FOUND, assertThrows(StatusException.class, () -> stub.check(ask("kv"))).getStatus().getCode());
        health.enterShutdown();
        assertEquals(ServingStatus.NOT_SERVING, stub.check(ask("")).getStatus());
    }

    @Test
    void watchStreamsTheStatusNowAndEachChange() throws Exception {
        BlockingQueue<Object> got = new LinkedBlockingQueue<>();
        HealthRpc.newStub(channel).watch(ask("kv"), new StreamObserver<>() {
            @Override
            public void onNext(HealthCheckResponse value) {
                got.add(value.getStatus());
            }

            @Override
            public void onError(Throwable t) {
                got.add(t);
            }

            @Override
            public void onCompleted() {
                got.add("completed");
            }
        });
        assertEquals(ServingStatus.SERVICE_UNKNOWN, got.poll(60, TimeUnit.SECONDS));
        health.setStatus("kv", ServingStatus.SERVING);
        assertEquals(ServingStatus.SERVING, got.poll(60, TimeUnit.SECONDS));
        health.setStatus("kv", ServingStatus.SERVING); // no change, nothing sent
        health.setStatus("kv", ServingStatus.NOT_SERVING);
        assertEquals(ServingStatus.NOT_SERVING, got.poll(60, TimeUnit.SECONDS));
        health.clearStatus("kv");
        assertEquals(ServingStatus.SERVICE_UNKNOWN, got.poll(60, TimeUnit.SECONDS));
    }
}
