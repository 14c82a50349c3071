package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TransportMode;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * rdmarpc's native generated API ({@code BenchServiceRpc}) over {@link RpcChannel}s and an {@link RpcServer}; or, lending,
 * the same methods with each side receiving lent messages ({@link LentCalls}).
 */
final class NativeApi implements StubApi {
    private final TransportMode mode;
    private final boolean lend;

    /** The API on this transport (negotiated, or forced to TCP or RDMA). */
    NativeApi(TransportMode mode) {
        this(mode, false);
    }

    /** The API on this transport, receiving large messages lent their receive buffers when {@code lend}. */
    NativeApi(TransportMode mode, boolean lend) {
        this.mode = mode;
        this.lend = lend;
    }

    /**
     * Under TLS, native-rdma lets TLS authenticate the connection and then moves the calls to RDMA unencrypted
     * (it could not run otherwise); native and native-tcp keep every call inside TLS.
     */
    private RdmaUnderTls rdmaUnderTls() {
        return mode == TransportMode.RDMA ? RdmaUnderTls.AUTHENTICATE_ONLY : RdmaUnderTls.NEVER;
    }

    @Override
    public StubChannel open(ClientSettings s) {
        RpcChannel.Builder b = RpcChannel.forAddress(s.host(), s.port())
                .transportMode(mode)
                .maxInboundMessageSize(s.maxMessage())
                .connectTimeout(s.connectTimeout());
        if (s.tls()) {
            b.tls(BenchTls.nativeClient()).rdmaUnderTls(rdmaUnderTls());
        }
        if (s.directExecutor()) {
            b.directExecutor();
        }
        RpcChannel channel = b.build();
        if (lend) {
            return new StubChannel(LentCalls.client(channel), () -> negotiated(channel), channel::close, channel::shutdownNow);
        }
        BenchServiceRpc.BenchServiceStub stub = BenchServiceRpc.newStub(channel);
        StubCalls calls = new StubCalls(stub::unary, stub::serverStream, responses -> {
            StreamObserver<BenchRequest> requests = stub.bidi(responses);
            return new StubCalls.RequestStream(requests::onNext, requests::onCompleted);
        });
        return new StubChannel(calls, () -> negotiated(channel), channel::close, channel::shutdownNow);
    }

    private static String negotiated(RpcChannel channel) {
        String t = channel.currentTransport();
        return t == null ? "?" : t;
    }

    @Override
    public BenchServer serve(ServerSettings s) throws IOException {
        EchoService<StreamObserver<BenchResponse>> echo = new EchoService<>(s.maxMessage(), StreamObserver::onNext,
                StreamObserver::onCompleted,
                (responses, why) -> responses.onError(Status.INVALID_ARGUMENT.withDescription(why).asException()));
        ServiceDefinition service = lend ? LentCalls.service(echo) : ServiceDefinition.builder(BenchServiceRpc.SERVICE_NAME)
                .addMethod(BenchServiceRpc.getUnaryMethod(), ServerCalls.asyncUnaryCall(echo::unary))
                .addMethod(BenchServiceRpc.getServerStreamMethod(), ServerCalls.asyncServerStreamingCall(echo::serverStream))
                .addMethod(BenchServiceRpc.getBidiMethod(), ServerCalls.asyncBidiStreamingCall(echo::bidi))
                .build();
        RpcServer.Builder b = RpcServer.forAddress(new InetSocketAddress(s.bindHost(), s.port()))
                .addService(service)
                .maxInboundMessageSize(s.maxMessage())
                .transportMode(mode);
        if (s.tls()) {
            b.tls(BenchTls.nativeServer()).rdmaUnderTls(rdmaUnderTls());
        }
        if (s.directExecutor()) {
            b.directExecutor();
        }
        RpcServer server = b.build().start();
        return new StubServer(server.getPort(), (timeout, unit) -> server.shutdownNow().awaitTermination(timeout, unit));
    }
}
