package dev.rdmarpc.grpc;

import io.grpc.ServerBuilder;
import io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.NettyServerBuilder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

import java.net.InetSocketAddress;

/**
 * grpc-java's interop suite with the {@link RdmaChannelBuilder} client of {@link RdmaInteropTlsTest} (mutual TLS, ALPN
 * offering {@code rdmarpc/1} and {@code h2}) calling a stock grpc-netty server with the same credentials: the server
 * picks {@code h2}, and the channel speaks gRPC over HTTP/2 to it.
 */
@RunWith(JUnit4.class)
public class GrpcServerInteropTlsTest extends RdmaInteropTlsTest {
    @Override
    protected ServerBuilder<?> getServerBuilder() {
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), serverCredentials())
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        InternalNettyServerBuilder.setStatsEnabled(b, false);
        serverBuilder = new CapturingServerBuilder(b.addStreamTracerFactory(createCustomCensusTracerFactory()));
        return serverBuilder;
    }
}
