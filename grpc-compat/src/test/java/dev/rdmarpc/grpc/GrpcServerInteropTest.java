package dev.rdmarpc.grpc;

import dev.rdmarpc.core.WireProtocol;
import io.grpc.ManagedChannelBuilder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * grpc-java's interop suite with an {@link RdmaChannelBuilder} client ({@link WireProtocol#AUTO}, cleartext) calling a
 * stock grpc-netty server ({@code NettyServerBuilder}, as {@link NettyInteropTest} makes it): the channel offers
 * rdmarpc's HELLO, meets the server's HTTP/2 SETTINGS and dials it again with gRPC over HTTP/2. Every case of the
 * reference, compression included, with only the client changed.
 */
@RunWith(JUnit4.class)
public class GrpcServerInteropTest extends NettyInteropTest {
    /** What the channel speaks. */
    protected WireProtocol wireProtocol() {
        return WireProtocol.AUTO;
    }

    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        RdmaChannelBuilder b = RdmaChannelBuilder.forAddress("127.0.0.1", serverBuilder.port())
                .wireProtocol(wireProtocol())
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        return b.intercept(createCensusStatsClientInterceptor());
    }
}
