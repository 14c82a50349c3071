package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceGrpc;
import dev.rdmarpc.grpc.RdmaChannelBuilder;
import dev.rdmarpc.grpc.RdmaServerBuilder;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** grpc-java's generated API ({@code BenchServiceGrpc}), over stock Netty or over rdmarpc's drop-in transport. */
final class GrpcApi implements StubApi {
    /**
     * Stock grpc-java over Netty (plaintext HTTP/2, or TLS from grpc's credentials), default settings apart from
     * message size and executor.
     */
    static final GrpcApi NETTY = new GrpcApi("h2",
            s -> s.tls()
                    ? NettyChannelBuilder.forAddress(s.host(), s.port(), BenchTls.grpcClient()).overrideAuthority(BenchTls.AUTHORITY)
                    : NettyChannelBuilder.forAddress(s.host(), s.port()).usePlaintext(),
            s -> s.tls()
                    ? NettyServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port()), BenchTls.grpcServer())
                    : NettyServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port())));
    /** grpc-java over rdmarpc ({@code RdmaChannelBuilder} / {@code RdmaServerBuilder}), TLS from the same credentials. */
    static final GrpcApi COMPAT = new GrpcApi("rdmarpc",
            s -> s.tls()
                    ? RdmaChannelBuilder.forAddress(s.host(), s.port(), BenchTls.grpcClient()).overrideAuthority(BenchTls.AUTHORITY)
                    : RdmaChannelBuilder.forAddress(s.host(), s.port()),
            s -> s.tls()
                    ? RdmaServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port()), BenchTls.grpcServer())
                    : RdmaServerBuilder.forAddress(new InetSocketAddress(s.bindHost(), s.port())));

    /**
     * A mixed fleet: the {@code RdmaChannelBuilder} client of {@link #COMPAT} (default {@code WireProtocol.AUTO}: it
     * finds the HTTP/2 server and speaks gRPC over HTTP/2 to it) calling the stock server of {@link #NETTY}.
     */
    static final GrpcApi COMPAT_TO_NETTY = new GrpcApi("h2", COMPAT.channels, NETTY.servers);

    private final String negotiated;
    private final Function<ClientSettings, ManagedChannelBuilder<?>> channels;
    private final Function<ServerSettings, ServerBuilder<?>> servers;

    private GrpcApi(String negotiated, Function<ClientSettings, ManagedChannelBuilder<?>> channels,
                    Function<ServerSettings, ServerBuilder<?>> servers) {
        this.negotiated = negotiated;
        this.channels = channels;
        this.servers = servers;
    }

    @Override
    public StubChannel open(ClientSettings s) {
        ManagedChannelBuilder<?> b = channels.apply(s).maxInboundMessageSize(s.maxMessage());
        if (s.directExecutor()) {
            b.directExecutor();
        }
        ManagedChannel channel = b.build();
        BenchServiceGrpc.BenchServiceStub stub = BenchServiceGrpc.newStub(channel);
        StubCalls calls = new StubCalls(stub::unary, stub::serverStream, responses -> {
            StreamObserver<BenchRequest> requests = stub.bidi(responses);
            return new StubCalls.RequestStream(requests::onNext, requests::onCompleted);
        });
        return new StubChannel(calls, () -> negotiated, () -> close(channel), channel::shutdownNow);
    }

    /** Shuts the channel down, forcing it after five seconds (a {@link ManagedChannel} has no close()). */
    private static void close(ManagedChannel channel) {
        channel.shutdown();
        try {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public BenchServer serve(ServerSettings s) throws IOException {
        EchoService<StreamObserver<BenchResponse>> echo = new EchoService<>(s.maxMessage(), StreamObserver::onNext,
                StreamObserver::onCompleted,
                (responses, why) -> responses.onError(Status.INVALID_ARGUMENT.withDescription(why).asException()));
        ServerServiceDefinition service = ServerServiceDefinition.builder(BenchServiceGrpc.getServiceDescriptor())
                .addMethod(BenchServiceGrpc.getUnaryMethod(), ServerCalls.asyncUnaryCall(echo::unary))
                .addMethod(BenchServiceGrpc.getServerStreamMethod(), ServerCalls.asyncServerStreamingCall(echo::serverStream))
                .addMethod(BenchServiceGrpc.getBidiMethod(), ServerCalls.asyncBidiStreamingCall(echo::bidi))
                .build();
        ServerBuilder<?> b = servers.apply(s).addService(service).maxInboundMessageSize(s.maxMessage());
        if (s.directExecutor()) {
            b.directExecutor();
        }
        Server server = b.build().start();
        return new StubServer(server.getPort(), (timeout, unit) -> server.shutdownNow().awaitTermination(timeout, unit));
    }
}
