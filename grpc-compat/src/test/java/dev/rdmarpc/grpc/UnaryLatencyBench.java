package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;

/**
 * A harness-free loop timing a 64-byte unary round trip (blocking stub, one caller thread) with
 * stock grpc-netty and with grpc over rdmarpc's TCP transport, in the same JVM on 127.0.0.1, with
 * grpc's default executors and with {@code directExecutor()} on both sides.
 * Run: {@code java -cp <test class path> dev.rdmarpc.grpc.UnaryLatencyBench [iterations]}.
 */
public final class UnaryLatencyBench {
    private UnaryLatencyBench() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        String payload = "x".repeat(64);
        ServerServiceDefinition echo = ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                })).build();
        for (int round = 0; round < 3; round++) {
            for (boolean direct : new boolean[] {false, true}) {
                String ex = direct ? "direct " : "default";
                NettyServerBuilder nsb = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(echo);
                NettyChannelBuilder ncb = NettyChannelBuilder.forAddress("127.0.0.1", 0).negotiationType(NegotiationType.PLAINTEXT);
                Server netty = (direct ? nsb.directExecutor() : nsb).build().start();
                ncb = NettyChannelBuilder.forAddress("127.0.0.1", netty.getPort()).negotiationType(NegotiationType.PLAINTEXT);
                ManagedChannel nettyChannel = (direct ? ncb.directExecutor() : ncb).build();
                report("grpc-netty,            " + ex, nettyChannel, payload, iterations);
                nettyChannel.shutdownNow();
                netty.shutdownNow();

                RdmaServerBuilder rsb = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                        .transportMode(TransportMode.TCP).addService(echo);
                Server rdma = (direct ? rsb.directExecutor() : rsb).build().start();
                RdmaChannelBuilder rcb = RdmaChannelBuilder.forAddress("127.0.0.1", rdma.getPort()).transportMode(TransportMode.TCP);
                ManagedChannel rdmaChannel = (direct ? rcb.directExecutor() : rcb).build();
                report("grpc over rdmarpc/tcp, " + ex, rdmaChannel, payload, iterations);
                rdmaChannel.shutdownNow();
                rdma.shutdownNow();
            }
        }
        System.exit(0);
    }

    private static void report(String name, ManagedChannel channel, String payload, int iterations) {
        for (int i = 0; i < iterations / 2; i++) {
            ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, CallOptions.DEFAULT, payload);
        }
        long[] nanos = new long[iterations];
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            ClientCalls.blockingUnaryCall(channel, SemanticsTest.ECHO, CallOptions.DEFAULT, payload);
            nanos[i] = System.nanoTime() - t0;
        }
        long total = System.nanoTime() - start;
        Arrays.sort(nanos);
        System.out.printf(Locale.ROOT, "%s  64 B unary round trip: mean %6.1f us  p50 %6.1f us  p99 %6.1f us  (%d calls)%n",
                name, total / 1e3 / iterations, nanos[iterations / 2] / 1e3, nanos[(int) (iterations * 0.99)] / 1e3, iterations);
    }
}
