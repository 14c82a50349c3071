package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.ChoiceChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.internal.testing.TestUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.TlsTesting;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.TestServiceGrpc;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLSession;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc's credentials on rdmarpc, as grpc-netty maps them: TLS and mutual TLS from TlsChannelCredentials /
 * TlsServerCredentials and useTransportSecurity, the calls' SSL session and security level (so call credentials
 * that demand privacy work over TLS and refuse plaintext), and credentials rdmarpc cannot honour refused by name.
 */
@ExtendWith(SlabLeakCheck.class)
class GrpcTlsTest {
    /** What the server saw of each call: its security level and SSL session. */
    private record Seen(SecurityLevel level, SSLSession session) {
    }

    private final BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static InputStream cert(String name) {
        return TlsTesting.loadCert(name);
    }

    private static ServerCredentials serverCreds(TlsServerCredentials.ClientAuth auth) throws IOException {
        return TlsServerCredentials.newBuilder().keyManager(cert("server1.pem"), cert("server1.key"))
                .trustManager(cert("ca.pem")).clientAuth(auth).build();
    }

    private static ChannelCredentials clientCreds(boolean withCertificate) throws IOException {
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(cert("ca.pem"));
        if (withCertificate) {
            b.keyManager(cert("client.pem"), cert("client.key"));
        }
        return b.build();
    }

    private Server start(RdmaServerBuilder b) throws IOException {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                seen.add(new Seen(call.getSecurityLevel(), call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)));
                return next.startCall(call, headers);
            }
        };
        Server s = b.addService(ServerInterceptors.intercept(new TestServiceGrpc.TestServiceImplBase() {
            @Override
            public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> response) {
                response.onNext(SimpleResponse.newBuilder().setUsername("ok").build());
                response.onCompleted();
            }
        }, recorder)).build().start();
        servers.add(s);
        return s;
    }

    private ManagedChannel track(ManagedChannel c) {
        channels.add(c);
        return c;
    }

    private static String call(ManagedChannel c) {
        return TestServiceGrpc.newBlockingStub(c).withDeadlineAfter(30, TimeUnit.SECONDS)
                .unaryCall(SimpleRequest.getDefaultInstance()).getUsername();
    }

    private Seen awaitSeen() throws InterruptedException {
        Seen s = seen.poll(30, TimeUnit.SECONDS);
        assertNotNull(s, "the server saw the call");
        return s;
    }

    @Test
    void mutualTlsGivesCallsTheSessionAndPrivacy() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.REQUIRE)));
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(true))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        assertEquals("ok", call(c));
        Seen seenByServer = awaitSeen();
        assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, seenByServer.level());
        X509Certificate client = (X509Certificate) seenByServer.session().getPeerCertificates()[0];
        assertTrue(client.getSubjectX500Principal().getName().contains("CN=testclient"), client.getSubjectX500Principal().getName());
    }

    @Test
    void aRequiredClientCertificateThatIsMissingFailsTheCall() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.REQUIRE)));
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(c));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("requires a client certificate"), e.getStatus().toString());
    }

    @Test
    void optionalClientAuthServesAClientWithoutACertificate() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.OPTIONAL)));
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        assertEquals("ok", call(c));
        assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, awaitSeen().level());
    }

    @Test
    void useTransportSecurityWithFilesServesTls(@TempDir Path dir) throws Exception {
        File chain = dir.resolve("server1.pem").toFile();
        File key = dir.resolve("server1.key").toFile();
        Files.copy(cert("server1.pem"), chain.toPath());
        Files.copy(cert("server1.key"), key.toPath());
        Server s = start(RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).useTransportSecurity(chain, key));
        ManagedChannel c = track(RdmaChannelBuilder.forTarget("127.0.0.1:" + s.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        assertEquals("ok", call(c));
        assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, awaitSeen().level());
    }

    @Test
    void theServerCertificateMustNameTheAuthority() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE)));
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(false)).build());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(c));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("hostname verification"), e.getStatus().toString());
    }

    @Test
    void callCredentialsDemandingPrivacyWorkOverTlsAndRefusePlaintext() throws Exception {
        CallCredentials privateOnly = new CallCredentials() {
            @Override
            public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
                if (info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
                    applier.fail(Status.UNAUTHENTICATED.withDescription("this token is only sent over a private connection"));
                    return;
                }
                Metadata m = new Metadata();
                m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer secret");
                applier.apply(m);
            }
        };
        Server tls = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE)));
        ManagedChannel secure = track(RdmaChannelBuilder.forAddress("127.0.0.1", tls.getPort(),
                CompositeChannelCredentials.create(clientCreds(false), privateOnly)).overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        assertEquals("ok", call(secure));

        Server plain = start(RdmaServerBuilder.forPort(0, InsecureServerCredentials.create()));
        ManagedChannel insecure = track(RdmaChannelBuilder.forAddress("127.0.0.1", plain.getPort(),
                CompositeChannelCredentials.create(InsecureChannelCredentials.create(), privateOnly)).build());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(insecure));
        assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), e.getStatus().toString());
    }

    @Test
    void plaintextCallsHaveNoSessionAndNoPrivacy() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, InsecureServerCredentials.create()));
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", s.getPort(), InsecureChannelCredentials.create()).build());
        assertEquals("ok", call(c));
        Seen seenByServer = awaitSeen();
        assertEquals(SecurityLevel.NONE, seenByServer.level());
        assertNull(seenByServer.session());
    }

    @Test
    void credentialsRdmarpcCannotHonourAreRefusedByName() throws Exception {
        ChannelCredentials custom = new ChannelCredentials() {
            @Override
            public ChannelCredentials withoutBearerTokens() {
                return this;
            }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaChannelBuilder.forTarget("localhost:1", custom));
        assertTrue(e.getMessage().contains("Unsupported credential type"), e.getMessage());
        ChannelCredentials fake = TlsChannelCredentials.newBuilder().requireFakeFeature().build();
        e = assertThrows(IllegalArgumentException.class, () -> RdmaChannelBuilder.forTarget("localhost:1", fake));
        assertTrue(e.getMessage().contains("TLS features not understood: [FAKE]"), e.getMessage());
        ChannelCredentials choice = ChoiceChannelCredentials.create(custom, InsecureChannelCredentials.create());
        RdmaChannelBuilder chosen = RdmaChannelBuilder.forTarget("localhost:1", choice);
        assertThrows(IllegalStateException.class, chosen::useTransportSecurity, "security is fixed by the credentials");
        ServerCredentials customServer = new ServerCredentials() {
        };
        e = assertThrows(IllegalArgumentException.class, () -> RdmaServerBuilder.forPort(0, customServer));
        assertTrue(e.getMessage().contains("Unsupported credential type"), e.getMessage());
    }

    @Test
    void aGrpcNettyTlsClientIsServedOverH2() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE)));
        ManagedChannel c = track(io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        call(c);
    }

    @Test
    void aGrpcNettyTlsClientIsRefusedByAlpnWhenHttp2IsOff() throws Exception {
        Server s = start(RdmaServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE)).grpcOverHttp2(false));
        ManagedChannel c = track(io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", s.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(c));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
    }

    @Test
    void anRdmarpcOnlyTlsClientOfAGrpcNettyTlsServerNamesTheAlpnMismatch() throws Exception {
        Server netty = io.grpc.netty.NettyServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE))
                .addService(new TestServiceGrpc.TestServiceImplBase() {
                }).build().start();
        servers.add(netty);
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", netty.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).wireProtocol(dev.rdmarpc.core.WireProtocol.RDMARPC).build());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(c));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(e.getStatus().getDescription().contains("rdmarpc/1"), e.getStatus().toString());
    }

    @Test
    void anAutoTlsClientOfAGrpcNettyTlsServerSpeaksH2ByAlpn() throws Exception {
        Server netty = io.grpc.netty.NettyServerBuilder.forPort(0, serverCreds(TlsServerCredentials.ClientAuth.NONE))
                .addService(new TestServiceGrpc.TestServiceImplBase() {
                }).build().start();
        servers.add(netty);
        ManagedChannel c = track(RdmaChannelBuilder.forAddress("127.0.0.1", netty.getPort(), clientCreds(false))
                .overrideAuthority(TestUtils.TEST_SERVER_HOST).build());
        // the call reaches the stock server's (empty) service over h2: grpc-java's own answer for a method not implemented
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> call(c));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), e.getStatus().toString());
    }
}
