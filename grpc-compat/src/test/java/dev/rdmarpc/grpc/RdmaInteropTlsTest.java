package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.internal.testing.TestUtils;
import io.grpc.testing.TlsTesting;
import io.grpc.testing.integration.AbstractInteropTest;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;

/**
 * grpc-java's interop suite over rdmarpc with mutual TLS, configured as grpc's own Netty TLS interop test: grpc's
 * test certificates (server1 for the server, client for the client, both trusting ca), the authority overridden
 * to a host the server's certificate names, client auth required.
 */
@RunWith(JUnit4.class)
public class RdmaInteropTlsTest extends AbstractInteropTest {
    /** The server being built, whose port the channel dials (set by getServerBuilder). */
    CapturingServerBuilder serverBuilder;

    static InputStream cert(String name) {
        return TlsTesting.loadCert(name);
    }

    /** The server's credentials: grpc's test server1 certificate, requiring a client certificate signed by grpc's test CA. */
    static ServerCredentials serverCredentials() {
        try {
            return TlsServerCredentials.newBuilder()
                    .keyManager(cert("server1.pem"), cert("server1.key"))
                    .trustManager(cert("ca.pem"))
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected ServerBuilder<?> getServerBuilder() {
        RdmaServerBuilder b = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), serverCredentials())
                .transportMode(TransportMode.TCP)
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        serverBuilder = new CapturingServerBuilder(b.addStreamTracerFactory(createCustomCensusTracerFactory()));
        return serverBuilder;
    }

    /** The client's credentials: grpc's test client certificate, trusting grpc's test CA. */
    static ChannelCredentials clientCredentials() {
        try {
            return TlsChannelCredentials.newBuilder()
                    .keyManager(cert("client.pem"), cert("client.key"))
                    .trustManager(cert("ca.pem"))
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        RdmaChannelBuilder b = RdmaChannelBuilder.forAddress("127.0.0.1", serverBuilder.port(), clientCredentials())
                .overrideAuthority(TestUtils.TEST_SERVER_HOST)
                .transportMode(TransportMode.TCP)
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        return b.intercept(createCensusStatsClientInterceptor());
    }

    /** The suite's per-operation wait, scaled for slow hosts (as in {@link RdmaInterop}). */
    @Override
    protected int operationTimeoutMillis() {
        return (int) (super.operationTimeoutMillis() * Math.max(1.0, Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1"))));
    }
}
