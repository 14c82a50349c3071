package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.transport.rdma.RdmaMetrics;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * grpc's retry policy over an RDMA connection that fails at run time: a call's first attempt is in flight over RDMA on
 * the guest's second device (rxe1 on dummy1, 192.168.78.1) when the test takes dummy1 down; the transport closes that
 * device's connections, the attempt fails with UNAVAILABLE, which the channel's retry policy names, and grpc's second
 * attempt (on a new connection, over TCP while the port is down) answers. The call succeeds after exactly two attempts.
 */
@Tag("rdma")
class RetryAfterRdmaFaultTest {
    private static final String ADDRESS = "192.168.78.1";
    private static final String NETDEV = "dummy1";
    private static final long SCALE = Math.max(1, (long) Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1")));
    private static final io.grpc.MethodDescriptor<String, String> STALL_ONCE = SemanticsTest.ECHO.toBuilder()
            .setFullMethodName("test.Semantics/StallOnce").build();

    private final AtomicInteger attempts = new AtomicInteger();
    private final CountDownLatch firstAttempt = new CountDownLatch(1);

    @Test
    void anAttemptFailedByAnRdmaFaultIsRetriedByGrpc() throws Exception {
        assumeTrue(ip("link", "show", NETDEV) == 0,
                "the guest's second RDMA device (" + NETDEV + ", " + ADDRESS + ") is needed");
        ServerServiceDefinition service = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(STALL_ONCE, ServerCalls.asyncUnaryCall((req, obs) -> {
                    if (attempts.incrementAndGet() == 1) {
                        firstAttempt.countDown(); // never answers: the fault ends this attempt
                        return;
                    }
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .build();
        // both ends open rxe1 on their first connection, which takes tens of seconds in the emulated guest: the
        // handshake and connect timeouts scale like every other timeout of the test
        Server server = RdmaServerBuilder.forAddress(new InetSocketAddress(ADDRESS, 0)).transportMode(TransportMode.AUTO)
                .handshakeTimeout(20 * SCALE, TimeUnit.SECONDS).addService(service).build().start();
        ManagedChannel channel = RdmaChannelBuilder.forAddress(ADDRESS, server.getPort()).transportMode(TransportMode.AUTO)
                .connectTimeout(20 * SCALE, TimeUnit.SECONDS)
                .defaultServiceConfig(SemanticsTest.serviceConfig("retryPolicy", Map.of("maxAttempts", 3.0,
                        "initialBackoff", "0.01s", "maxBackoff", "0.1s", "backoffMultiplier", 2.0,
                        "retryableStatusCodes", List.of("UNAVAILABLE")))).enableRetry().build();
        try {
            long upgrades = RdmaMetrics.snapshot().upgrades();
            assertEquals("warm", ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(60 * SCALE, TimeUnit.SECONDS), "warm"));
            assertTrue(RdmaMetrics.snapshot().upgrades() >= upgrades + 2, "both ends of the connection moved to RDMA");
            var call = ClientCalls.futureUnaryCall(channel.newCall(STALL_ONCE,
                    CallOptions.DEFAULT.withDeadlineAfter(120 * SCALE, TimeUnit.SECONDS)), "again");
            assertTrue(firstAttempt.await(60 * SCALE, TimeUnit.SECONDS), "the first attempt reached the server");
            assertEquals(0, ip("link", "set", NETDEV, "down"));
            assertEquals("again", call.get(60 * SCALE, TimeUnit.SECONDS), "the retried attempt answered");
            assertEquals(2, attempts.get(), "one attempt failed by the fault, one retried by grpc");
        } finally {
            ip("link", "set", NETDEV, "up");
            channel.shutdownNow();
            server.shutdownNow();
            channel.awaitTermination(60 * SCALE, TimeUnit.SECONDS);
            server.awaitTermination(60 * SCALE, TimeUnit.SECONDS);
        }
        Await.until(Duration.ofSeconds(60 * SCALE), () -> RdmaMetrics.snapshot().connections() == 0,
                () -> "RDMA connections closed: " + RdmaMetrics.snapshot().connections());
    }

    private static int ip(String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = "ip";
        System.arraycopy(args, 0, command, 1, args.length);
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return -1; // no ip tool
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        if (rc != 0) {
            System.out.println("[rdma] " + String.join(" ", command) + ": " + out);
        }
        return rc;
    }
}
