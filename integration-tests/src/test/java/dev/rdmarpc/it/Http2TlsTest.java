package dev.rdmarpc.it;

import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.TlsConfig;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A TLS server's port takes stock gRPC clients by ALPN ({@code h2}) beside rdmarpc clients ({@code rdmarpc/1}): the
 * same services, and interceptors see the client's verified certificate on both.
 */
class Http2TlsTest {
    private static RpcServer server(TlsConfig tls, boolean http2, BlockingQueue<String> identities) throws IOException {
        ServerInterceptor recordIdentity = new ServerInterceptor() {
            @Override
            public <ReqT, RespT> dev.rdmarpc.core.ServerCall.Listener<ReqT> interceptCall(dev.rdmarpc.core.ServerCall<ReqT, RespT> call,
                    dev.rdmarpc.core.Metadata headers, dev.rdmarpc.core.ServerCallHandler<ReqT, RespT> next) {
                try {
                    identities.add(call.getTransportName() + " " + call.getSslSession().getPeerPrincipal().getName());
                } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
                    identities.add(call.getTransportName() + " none");
                }
                return next.startCall(call, headers);
            }
        };
        return RpcServer.forPort(0).addService(new TestService().definition()).intercept(recordIdentity).tls(tls)
                .grpcOverHttp2(http2).build().start();
    }

    private static ManagedChannel stockTlsChannel(int port, boolean withClientCertificate) throws IOException {
        TlsChannelCredentials.Builder creds = TlsChannelCredentials.newBuilder().trustManager(TlsFiles.file("ca.pem").toFile());
        if (withClientCertificate) {
            creds.keyManager(TlsFiles.file("client.pem").toFile(), TlsFiles.file("client.key").toFile());
        }
        return NettyChannelBuilder.forAddress("localhost", port, creds.build()).build();
    }

    @Test
    void stockGrpcAndRdmarpcClientsShareATlsPortAndInterceptorsSeeTheirCertificates() throws Exception {
        BlockingQueue<String> identities = new LinkedBlockingQueue<>();
        RpcServer s = server(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.REQUIRE).build(), true, identities);
        ManagedChannel grpc = stockTlsChannel(s.getPort(), true);
        RpcChannel rdmarpc = RpcChannel.forAddress("localhost", s.getPort()).tls(TlsFiles.client("client").build()).build();
        try {
            byte[] a = Bytes.pattern(1000, 1);
            assertArrayEquals(a, StockGrpc.echo(grpc, a));
            assertEquals("h2 CN=test-client", identities.poll(60, TimeUnit.SECONDS));
            byte[] b = Bytes.pattern(1000, 2);
            assertArrayEquals(b, ClientCalls.blockingUnaryCall(rdmarpc, TestService.ECHO, CallOptions.DEFAULT, b));
            assertEquals("tcp CN=test-client", identities.poll(60, TimeUnit.SECONDS));
            int n = 0;
            for (var it = StockGrpc.stream(grpc, 50, 10_000); it.hasNext(); n++) {
                assertArrayEquals(Bytes.pattern(10_000, n), it.next());
            }
            assertEquals(50, n);
        } finally {
            grpc.shutdownNow();
            rdmarpc.shutdownNow();
            s.shutdownNow();
            s.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStockClientWithoutTheRequiredCertificateIsRefused() throws Exception {
        assertStockClientRefused(TlsFiles.server("server").clientAuth(TlsConfig.ClientAuth.REQUIRE).build(), true);
    }

    @Test
    void withHttp2OffTheServerDoesNotAgreeToH2() throws Exception {
        assertStockClientRefused(TlsFiles.server("server").build(), false);
    }

    /** A stock client without a certificate fails with UNAVAILABLE against a server with {@code tls}. */
    private static void assertStockClientRefused(TlsConfig tls, boolean http2) throws Exception {
        RpcServer s = server(tls, http2, new LinkedBlockingQueue<>());
        ManagedChannel grpc = stockTlsChannel(s.getPort(), false);
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> StockGrpc.echo(grpc, new byte[1]));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        } finally {
            grpc.shutdownNow();
            s.shutdownNow();
            s.awaitTermination(60, TimeUnit.SECONDS);
        }
    }
}
