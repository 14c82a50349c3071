package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ServerBuilder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

import java.net.InetSocketAddress;

/**
 * grpc-java's interop suite with a stock grpc-netty client ({@code NettyChannelBuilder}, cleartext HTTP/2 with prior
 * knowledge, as {@link NettyInteropTest} makes it) calling an {@link RdmaServerBuilder} server: the server serves
 * gRPC over HTTP/2 on its rdmarpc port. Every case of the reference, compression included, with only the server
 * changed.
 */
@RunWith(JUnit4.class)
public class H2InteropTest extends NettyInteropTest {
    @Override
    protected ServerBuilder<?> getServerBuilder() {
        RdmaServerBuilder b = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .transportMode(TransportMode.TCP)
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        serverBuilder = new CapturingServerBuilder(b.addStreamTracerFactory(createCustomCensusTracerFactory()));
        return serverBuilder;
    }
}
