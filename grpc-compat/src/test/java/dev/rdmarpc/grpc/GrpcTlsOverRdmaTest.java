package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.RdmaUnderTls;
import dev.rdmarpc.core.TransportMode;
import io.grpc.Attributes;
import io.grpc.CallCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.internal.testing.TestUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.TlsTesting;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.TestServiceGrpc;

import java.security.cert.X509Certificate;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLSession;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * grpc calls over a mutually authenticated TLS connection upgraded to RDMA ({@code rdmaUnderTls(AUTHENTICATE_ONLY)}
 * on both builders, both forced to RDMA): both sides' calls carry the TLS session that authenticated the upgrade and
 * security level PRIVACY_AND_INTEGRITY, so call credentials that demand privacy are sent.
 */
@Tag("rdma")
@ExtendWith(SlabLeakCheck.class)
class GrpcTlsOverRdmaTest {
    /** What a side saw of a call: its transport, security level and TLS session. */
    private record Seen(String transport, SecurityLevel level, SSLSession session) {
    }

    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private final BlockingQueue<Seen> server = new LinkedBlockingQueue<>();
    private final BlockingQueue<Seen> client = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> tokens = new LinkedBlockingQueue<>();
    private Server s;
    private ManagedChannel c;

    @AfterEach
    void close() throws InterruptedException {
        if (c != null) {
            c.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
        if (s != null) {
            s.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    private static long timeoutMillis() {
        return (long) (60_000 * Math.max(1.0, Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1"))));
    }

    private static Seen seen(Attributes a, SecurityLevel level) {
        return new Seen(a.get(RdmaAttributes.TRANSPORT), level, a.get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
    }

    /** Sends its token only where the call is private; fails the call otherwise. */
    private static final CallCredentials PRIVATE_ONLY = new CallCredentials() {
        @Override
        public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
            if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("this token is only sent over a private connection, not "
                        + info.getSecurityLevel()));
                return;
            }
            Metadata m = new Metadata();
            m.put(AUTHORIZATION, "Bearer secret");
            applier.apply(m);
        }
    };

    private void start() throws Exception {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                server.add(seen(call.getAttributes(), call.getSecurityLevel()));
                tokens.add(String.valueOf(headers.get(AUTHORIZATION)));
                return next.startCall(call, headers);
            }
        };
        s = RdmaServerBuilder.forPort(0, TlsServerCredentials.newBuilder()
                        .keyManager(TlsTesting.loadCert("server1.pem"), TlsTesting.loadCert("server1.key"))
                        .trustManager(TlsTesting.loadCert("ca.pem"))
                        .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE).build())
                .transportMode(TransportMode.RDMA).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY)
                .handshakeTimeout(timeoutMillis(), TimeUnit.MILLISECONDS) // a TLS handshake and a queue pair in an emulated guest
                .addService(ServerInterceptors.intercept(new TestServiceGrpc.TestServiceImplBase() {
                    @Override
                    public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> response) {
                        response.onNext(SimpleResponse.newBuilder().setUsername("ok").build());
                        response.onCompleted();
                    }
                }, recorder)).build().start();
        ClientInterceptor clientRecorder = new CallAttributesRecorder(
                a -> client.add(seen(a, a.get(io.grpc.internal.GrpcAttributes.ATTR_SECURITY_LEVEL))));
        c = RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), CompositeChannelCredentials.create(
                        TlsChannelCredentials.newBuilder()
                                .keyManager(TlsTesting.loadCert("client.pem"), TlsTesting.loadCert("client.key"))
                                .trustManager(TlsTesting.loadCert("ca.pem")).build(), PRIVATE_ONLY))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST)
                .transportMode(TransportMode.RDMA).rdmaUnderTls(RdmaUnderTls.AUTHENTICATE_ONLY)
                .connectTimeout(timeoutMillis(), TimeUnit.MILLISECONDS)
                .intercept(clientRecorder).build();
    }

    private Seen await(BlockingQueue<Seen> q, String side) throws InterruptedException {
        Seen seen = q.poll(timeoutMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(seen, side + " saw the call");
        return seen;
    }

    @Test
    void callsOverAnUpgradedTlsConnectionCarryItsSessionAndPrivacy() throws Exception {
        start();
        String answer = TestServiceGrpc.newBlockingStub(c).withDeadlineAfter(timeoutMillis(), TimeUnit.MILLISECONDS)
                .unaryCall(SimpleRequest.getDefaultInstance()).getUsername();
        assertEquals("ok", answer, "call credentials that demand privacy were applied over RDMA");
        assertEquals("Bearer secret", tokens.poll(timeoutMillis(), TimeUnit.MILLISECONDS));

        Seen onServer = await(server, "the server");
        assertEquals("rdma", onServer.transport(), "the connection was upgraded");
        assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, onServer.level());
        assertNotNull(onServer.session(), "the server's call carries the TLS session");
        String clientName = ((X509Certificate) onServer.session().getPeerCertificates()[0]).getSubjectX500Principal().getName();
        assertTrue(clientName.contains("CN=testclient"), clientName);

        Seen onClient = await(client, "the client");
        assertEquals("rdma", onClient.transport(), "the client's call went over RDMA");
        assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, onClient.level());
        assertNotNull(onClient.session(), "the client's call carries the TLS session");
        String serverName = ((X509Certificate) onClient.session().getPeerCertificates()[0]).getSubjectX500Principal().getName();
        assertTrue(serverName.contains("test.google"), "the session that authenticated the server: " + serverName);
    }
}
