package dev.rdmarpc.grpc;

import io.grpc.ManagedChannelBuilder;
import io.grpc.internal.testing.TestUtils;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * grpc-java's interop suite with a stock grpc-netty client under mutual TLS (ALPN {@code h2}) calling the
 * {@link RdmaServerBuilder} server of {@link RdmaInteropTlsTest} (grpc's test certificates, client auth required):
 * the server's TLS port serves HTTP/2 clients beside rdmarpc ones.
 */
@RunWith(JUnit4.class)
public class H2InteropTlsTest extends RdmaInteropTlsTest {
    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress("127.0.0.1", serverBuilder.port(), clientCredentials())
                .overrideAuthority(TestUtils.TEST_SERVER_HOST)
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        InternalNettyChannelBuilder.setStatsEnabled(b, false);
        return b.intercept(createCensusStatsClientInterceptor());
    }
}
