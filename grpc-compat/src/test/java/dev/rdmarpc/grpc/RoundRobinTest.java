package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.testing.Await;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * grpc's round_robin over rdmarpc: one channel over three servers given as a static address list
 * spreads calls over all three; killing one moves calls to the other two, and the only calls that
 * fail are those that had started before the kill; shutting one down gracefully fails none.
 */
@org.junit.jupiter.api.extension.ExtendWith(SlabLeakCheck.class)
class RoundRobinTest {
    static final StaticResolverProvider RESOLVER = new StaticResolverProvider();

    @BeforeAll
    static void registerResolver() {
        NameResolverRegistry.getDefaultRegistry().register(RESOLVER);
    }

    @AfterAll
    static void deregisterResolver() {
        NameResolverRegistry.getDefaultRegistry().deregister(RESOLVER);
    }

    record Failure(long startNanos, long endNanos, Status status) {
    }

    @Test
    void spreadsOverAllAndSurvivesAKill() throws Exception {
        run(false);
    }

    @Test
    void aGracefulShutdownFailsNoCall() throws Exception {
        run(true);
    }

    private void run(boolean graceful) throws Exception {
        ScheduledExecutorService delays = Executors.newScheduledThreadPool(2);
        AtomicIntegerArray served = new AtomicIntegerArray(3);
        List<Server> servers = new ArrayList<>();
        StringBuilder target = new StringBuilder(StaticResolverProvider.SCHEME + ":///");
        for (int i = 0; i < 3; i++) {
            int index = i;
            ServerServiceDefinition service = ServerServiceDefinition.builder("test.Semantics")
                    .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                        served.incrementAndGet(index);
                        // answer a little later, so that calls are in flight when a server dies
                        delays.schedule(() -> {
                            obs.onNext(Integer.toString(index));
                            obs.onCompleted();
                        }, 1, TimeUnit.MILLISECONDS);
                    })).build();
            Server s = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.TCP)
                    .addService(service).build().start();
            servers.add(s);
            target.append(i > 0 ? "," : "").append("127.0.0.1:").append(s.getPort());
        }
        ManagedChannel channel = RdmaChannelBuilder.forTarget(target.toString()).transportMode(TransportMode.TCP)
                .defaultLoadBalancingPolicy("round_robin").build();
        try {
            awaitReady(channel);
            // round_robin is READY with its first subchannel: call until each server has answered once, so all three
            // subchannels are READY, then all three take calls
            Await.until(() -> {
                echo(channel);
                return served.get(0) > 0 && served.get(1) > 0 && served.get(2) > 0;
            }, () -> "every server answering: " + served);
            int[] counts = new int[3];
            for (int i = 0; i < 60; i++) {
                counts[Integer.parseInt(echo(channel))]++;
            }
            for (int i = 0; i < 3; i++) {
                assertTrue(counts[i] >= 12, "server " + i + " got " + counts[i] + " of 60 calls: " + java.util.Arrays.toString(counts));
            }

            // steady load from four threads, then kill server 1 once it takes its share of the load
            ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();
            AtomicBoolean stop = new AtomicBoolean();
            Thread[] load = new Thread[4];
            int servedAtLoadStart1 = served.get(1);
            for (int t = 0; t < load.length; t++) {
                load[t] = new Thread(() -> {
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        try {
                            echo(channel);
                        } catch (StatusRuntimeException e) {
                            failures.add(new Failure(start, System.nanoTime(), e.getStatus()));
                        }
                    }
                }, "round-robin-load-" + t);
                load[t].start();
            }
            int servedAtKill1;
            int servedByOthersAtKill;
            try {
                Await.until(() -> served.get(1) >= servedAtLoadStart1 + 20, () -> "server 1 taking load: " + served);
                if (graceful) {
                    servers.get(1).shutdown();
                } else {
                    servers.get(1).shutdownNow();
                }
                // read once shutdownNow() has returned: calls it did not see cannot have been counted before it
                servedAtKill1 = served.get(1);
                servedByOthersAtKill = served.get(0) + served.get(2);
                Await.until(() -> served.get(0) + served.get(2) > servedByOthersAtKill + 100,
                        () -> "the others taking over: " + (served.get(0) + served.get(2) - servedByOthersAtKill) + " calls");
            } finally {
                stop.set(true);
                for (Thread t : load) {
                    t.join(60_000);
                }
            }
            if (graceful) {
                assertTrue(failures.isEmpty(), "calls failed during a graceful shutdown: " + failures);
            }
            // The client learns of the kill when it reads the connection's close, a little after shutdownNow()
            // returns; a call sent on that connection in between fails like the calls in flight (as with grpc-netty).
            // The first failure marks the moment the client knew: no call started after it may fail.
            long observed = failures.stream().mapToLong(Failure::endNanos).min().orElse(Long.MAX_VALUE);
            for (Failure f : failures) {
                assertTrue(f.startNanos() < observed, "a call started " + (f.startNanos() - observed) / 1000
                        + " us after the client saw the kill failed: " + f.status());
                assertEquals(Status.Code.UNAVAILABLE, f.status().getCode(), f.status().toString());
            }
            assertTrue(failures.size() <= load.length, failures.size() + " failures with " + load.length + " calls in flight");
            if (graceful) {
                // calls the client opened before it heard the GOAWAY are served (however many the timing allows);
                // then the server ends
                assertTrue(servers.get(1).awaitTermination(60, TimeUnit.SECONDS), "server 1 finished its calls and terminated");
            } else {
                // killed: after shutdownNow() returned, at most the call each load thread had in flight reached a handler
                assertTrue(served.get(1) - servedAtKill1 <= load.length, "server 1 took calls after it was killed: "
                        + (served.get(1) - servedAtKill1));
            }
            System.out.printf("round_robin: before %s %s; after: %d failed (in flight), served %s%n",
                    graceful ? "shutdown" : "kill", java.util.Arrays.toString(counts), failures.size(), served);
        } finally {
            channel.shutdownNow();
            for (Server s : servers) {
                s.shutdownNow();
            }
            delays.shutdownNow();
        }
    }

    private static String echo(ManagedChannel channel) {
        return ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), "x");
    }

    static void awaitReady(ManagedChannel channel) {
        Await.until(() -> channel.getState(true) == ConnectivityState.READY, () -> "channel READY, not " + channel.getState(false));
    }
}
