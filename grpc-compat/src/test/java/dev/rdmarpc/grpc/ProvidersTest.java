package dev.rdmarpc.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ChannelCredentials;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.FreshRegistries;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ManagedChannelProvider;
import io.grpc.ManagedChannelRegistry;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import io.grpc.ServerProvider;
import io.grpc.ServerRegistry;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.internal.testing.TestUtils;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyChannelProvider;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.NettyServerProvider;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.TlsTesting;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.SimpleResponse;
import io.grpc.testing.integration.TestServiceGrpc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The zero-line switch: grpc's {@code ManagedChannelProvider} / {@code ServerProvider} for rdmarpc, chosen over
 * grpc-netty only when asked ({@code rdmarpc.grpc.provider=prefer}), exercised through registries of the test's own
 * making with grpc-netty's providers beside ours, and end to end over loopback, plaintext and TLS.
 */
@ExtendWith(SlabLeakCheck.class)
class ProvidersTest {
    private static final Context.Key<String> TRANSPORT = Context.key("rdmarpc transport of the call");
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

    private static List<ManagedChannelProvider> channelProviders(ProviderChoice choice) {
        return List.of(new NettyChannelProvider(), new io.grpc.netty.shaded.io.grpc.netty.NettyChannelProvider(),
                new RdmaChannelProvider(choice));
    }

    private static List<ServerProvider> serverProviders(ProviderChoice choice) {
        return List.of(new NettyServerProvider(), new io.grpc.netty.shaded.io.grpc.netty.NettyServerProvider(),
                new RdmaServerProvider(choice));
    }

    @Test
    void theSettingNamesTheChoice() {
        assertEquals(ProviderChoice.FALLBACK, ProviderChoice.parse(null));
        assertEquals(ProviderChoice.FALLBACK, ProviderChoice.parse(" "));
        assertEquals(ProviderChoice.PREFER, ProviderChoice.parse("Prefer"));
        assertEquals(ProviderChoice.FALLBACK, ProviderChoice.parse("fallback"));
        assertEquals(ProviderChoice.OFF, ProviderChoice.parse("off"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProviderChoice.parse("yes"));
        assertTrue(e.getMessage().contains("prefer, fallback or off"), e.getMessage());
    }

    @Test
    void bothProvidersAreRegisteredForServiceLoader() {
        assertTrue(ServiceLoader.load(ManagedChannelProvider.class).stream()
                .anyMatch(p -> p.type() == RdmaChannelProvider.class));
        assertTrue(ServiceLoader.load(ServerProvider.class).stream()
                .anyMatch(p -> p.type() == RdmaServerProvider.class));
    }

    @Test
    void preferredRdmarpcIsChosenOverGrpcNetty() {
        assertInstanceOf(RdmaChannelBuilder.class, FreshRegistries.newChannelBuilder(channelProviders(ProviderChoice.PREFER),
                "127.0.0.1:1", InsecureChannelCredentials.create()));
        assertInstanceOf(RdmaServerBuilder.class, FreshRegistries.newServerBuilderForPort(serverProviders(ProviderChoice.PREFER),
                0, InsecureServerCredentials.create()));
    }

    @Test
    void byDefaultGrpcNettyStaysTheChoice() {
        assertInstanceOf(NettyChannelBuilder.class, FreshRegistries.newChannelBuilder(channelProviders(ProviderChoice.FALLBACK),
                "127.0.0.1:1", InsecureChannelCredentials.create()));
        assertInstanceOf(NettyServerBuilder.class, FreshRegistries.newServerBuilderForPort(serverProviders(ProviderChoice.FALLBACK),
                0, InsecureServerCredentials.create()));
    }

    @Test
    void theJvmWideRegistriesKeepGrpcNettyWithoutTheSetting() {
        assumeTrue(System.getProperty(ProviderChoice.PROPERTY) == null && System.getenv(ProviderChoice.ENVIRONMENT) == null,
                "the switch is not set in this JVM");
        // grpc-netty and grpc-netty-shaded are both on the test class path: one of them wins
        String channel = Grpc.newChannelBuilder("127.0.0.1:1", InsecureChannelCredentials.create()).getClass().getName();
        String server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).getClass().getName();
        assertTrue(channel.endsWith(".netty.NettyChannelBuilder"), channel);
        assertTrue(server.endsWith(".netty.NettyServerBuilder"), server);
    }

    @Test
    void aloneOnTheClassPathRdmarpcIsUsedEvenAsFallback() {
        assertInstanceOf(RdmaChannelBuilder.class, FreshRegistries.newChannelBuilder(
                List.of(new RdmaChannelProvider(ProviderChoice.FALLBACK)), "127.0.0.1:1", InsecureChannelCredentials.create()));
        assertInstanceOf(RdmaServerBuilder.class, FreshRegistries.newServerBuilderForPort(
                List.of(new RdmaServerProvider(ProviderChoice.FALLBACK)), 0, InsecureServerCredentials.create()));
    }

    @Test
    void offTakesRdmarpcOutOfTheChoice() {
        assertFalse(new RdmaChannelProvider(ProviderChoice.OFF).isAvailable());
        assertFalse(new RdmaServerProvider(ProviderChoice.OFF).isAvailable());
        // grpc's registries refuse to register an unavailable provider, so ServiceLoader's copy is never chosen
        assertThrows(IllegalArgumentException.class, () -> new ManagedChannelRegistry().register(
                new RdmaChannelProvider(ProviderChoice.OFF)));
        assertThrows(IllegalArgumentException.class, () -> new ServerRegistry().register(
                new RdmaServerProvider(ProviderChoice.OFF)));
    }

    @Test
    void unsupportedCredentialsAreAnErrorResultNamingThem() {
        ChannelCredentials unknown = new ChannelCredentials() {
            @Override
            public ChannelCredentials withoutBearerTokens() {
                return this;
            }
        };
        ManagedChannelProvider.NewChannelBuilderResult channel =
                new RdmaChannelProvider(ProviderChoice.PREFER).newChannelBuilder("127.0.0.1:1", unknown);
        assertNull(channel.getChannelBuilder());
        assertNotNull(channel.getError());
        ServerCredentials unknownServer = new ServerCredentials() {
        };
        ServerProvider.NewServerBuilderResult server =
                new RdmaServerProvider(ProviderChoice.PREFER).newServerBuilderForPort(0, unknownServer);
        assertNull(server.getServerBuilder());
        assertNotNull(server.getError());
    }

    @Test
    void aPlaintextCallTravelsOverTheChosenProviders() throws Exception {
        Server s = start(FreshRegistries.newServerBuilderForPort(serverProviders(ProviderChoice.PREFER), 0,
                InsecureServerCredentials.create()));
        ManagedChannelBuilder<?> b = FreshRegistries.newChannelBuilder(channelProviders(ProviderChoice.PREFER),
                "127.0.0.1:" + s.getPort(), InsecureChannelCredentials.create());
        assertInstanceOf(RdmaChannelBuilder.class, b);
        assertEquals("tcp", call(track(b.build())));
    }

    @Test
    void aTlsCallTravelsOverTheChosenProviders() throws Exception {
        ServerCredentials serverCreds = TlsServerCredentials.newBuilder()
                .keyManager(TlsTesting.loadCert("server1.pem"), TlsTesting.loadCert("server1.key")).build();
        ChannelCredentials channelCreds = TlsChannelCredentials.newBuilder().trustManager(TlsTesting.loadCert("ca.pem")).build();
        Server s = start(FreshRegistries.newServerBuilderForPort(serverProviders(ProviderChoice.PREFER), 0, serverCreds));
        ManagedChannelBuilder<?> b = FreshRegistries.newChannelBuilder(channelProviders(ProviderChoice.PREFER),
                "127.0.0.1:" + s.getPort(), channelCreds);
        assertInstanceOf(RdmaChannelBuilder.class, b);
        assertEquals("tcp", call(track(b.overrideAuthority(TestUtils.TEST_SERVER_HOST).build())));
    }

    /** Starts a server whose unary call answers with the rdmarpc transport the call arrived on. */
    private Server start(ServerBuilder<?> b) throws IOException {
        assertInstanceOf(RdmaServerBuilder.class, b);
        ServerInterceptor transportOfCall = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                Context context = Context.current().withValue(TRANSPORT, call.getAttributes().get(RdmaAttributes.TRANSPORT));
                return Contexts.interceptCall(context, call, headers, next);
            }
        };
        Server s = b.addService(ServerInterceptors.intercept(new TestServiceGrpc.TestServiceImplBase() {
            @Override
            public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> response) {
                response.onNext(SimpleResponse.newBuilder().setUsername(String.valueOf(TRANSPORT.get())).build());
                response.onCompleted();
            }
        }, transportOfCall)).build().start();
        servers.add(s);
        assertInstanceOf(InetSocketAddress.class, s.getListenSockets().get(0));
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
}
