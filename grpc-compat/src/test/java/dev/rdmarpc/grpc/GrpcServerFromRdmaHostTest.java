package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * On a host with an RDMA device, one kind of {@link RdmaChannelBuilder} channel ({@code TransportMode.AUTO},
 * {@code WireProtocol.AUTO}) calls a stock grpc-netty server over HTTP/2 (its RDMA offer is dropped with the HELLO that
 * met the server's SETTINGS, and the channel then calls it through grpc-netty's transport, which never upgrades) and an
 * rdmarpc server over RDMA.
 */
@Tag("rdma")
@ExtendWith(SlabLeakCheck.class)
class GrpcServerFromRdmaHostTest {
    private static final long SCALE = Math.max(1, (long) Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1")));
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final BlockingQueue<String> transports = new LinkedBlockingQueue<>();

    @AfterEach
    void close() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(30 * SCALE, TimeUnit.SECONDS);
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(30 * SCALE, TimeUnit.SECONDS);
        }
    }

    private static ServerServiceDefinition echo() {
        return ServerServiceDefinition.builder("test.Semantics")
                .addMethod(SemanticsTest.ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .build();
    }

    /**
     * Records the transport of each call's connection when its headers arrive: rdmarpc's ({@link RdmaAttributes#TRANSPORT})
     * or, where that is absent, grpc-netty's.
     */
    private final ClientInterceptor recorder = new ClientInterceptor() {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    ClientCall<Q, R> call = this;
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onHeaders(Metadata h) {
                            Attributes a = call.getAttributes();
                            String rdmarpc = a.get(RdmaAttributes.TRANSPORT);
                            transports.add(rdmarpc != null ? rdmarpc : "grpc-netty");
                            super.onHeaders(h);
                        }
                    }, headers);
                }
            };
        }
    };

    private String callThrough(int port) throws InterruptedException {
        ManagedChannel c = RdmaChannelBuilder.forAddress("127.0.0.1", port).transportMode(TransportMode.AUTO)
                .connectTimeout(20 * SCALE, TimeUnit.SECONDS).intercept(recorder).build();
        channels.add(c);
        assertEquals("hi", ClientCalls.blockingUnaryCall(c, SemanticsTest.ECHO,
                CallOptions.DEFAULT.withDeadlineAfter(60 * SCALE, TimeUnit.SECONDS), "hi"));
        return transports.poll(60 * SCALE, TimeUnit.SECONDS);
    }

    @Test
    void oneChannelKindCallsAStockServerOverH2AndAnRdmarpcServerOverRdma() throws Exception {
        Server netty = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(echo()).build().start();
        servers.add(netty);
        Server rdmarpc = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).transportMode(TransportMode.AUTO)
                .handshakeTimeout(20 * SCALE, TimeUnit.SECONDS).addService(echo()).build().start();
        servers.add(rdmarpc);
        assertEquals("grpc-netty", callThrough(netty.getPort()));
        assertEquals("rdma", callThrough(rdmarpc.getPort()));
    }
}
