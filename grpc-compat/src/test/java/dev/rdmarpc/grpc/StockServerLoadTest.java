package dev.rdmarpc.grpc;

import com.google.common.util.concurrent.ListenableFuture;
import dev.rdmarpc.core.WireProtocol;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * An {@link RdmaChannelBuilder} channel calling a stock grpc-netty server over HTTP/2 with 64 unary calls of 1 MiB at
 * once, far more bytes than HTTP/2's connection window: every call is answered intact, no slab leaks.
 */
@ExtendWith(SlabLeakCheck.class)
class StockServerLoadTest {
    /** A bound for a hung call only: every call here ends long before. */
    private static final long BOUND_SECONDS = 120;
    private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Load/Echo")
            .setRequestMarshaller(GrpcLimitsTest.BYTES).setResponseMarshaller(GrpcLimitsTest.BYTES).build();

    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void close() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @EnumSource(value = WireProtocol.class, names = {"AUTO", "GRPC"})
    void sixtyFourConcurrentMebibyteEchoes(WireProtocol protocol) throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).maxInboundMessageSize(8 << 20)
                .addService(ServerServiceDefinition.builder("test.Load").addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                })).build()).build().start();
        channel = RdmaChannelBuilder.forAddress("127.0.0.1", server.getPort()).wireProtocol(protocol).build();
        byte[] request = new byte[1 << 20];
        Arrays.fill(request, (byte) 7);
        List<ListenableFuture<byte[]>> answers = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            answers.add(ClientCalls.futureUnaryCall(channel.newCall(ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(BOUND_SECONDS, TimeUnit.SECONDS)), request));
        }
        for (ListenableFuture<byte[]> answer : answers) {
            assertArrayEquals(request, answer.get(BOUND_SECONDS, TimeUnit.SECONDS));
        }
    }
}
