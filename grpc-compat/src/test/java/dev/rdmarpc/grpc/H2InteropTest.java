package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.testing.integration.AbstractInteropTest;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

import java.net.InetSocketAddress;

/**
 * grpc-java's interop suite with a stock grpc-netty client ({@link NettyChannelBuilder}, cleartext HTTP/2 with prior
 * knowledge) calling an {@link RdmaServerBuilder} server: the server serves gRPC over HTTP/2 on its rdmarpc port.
 * Configured as {@link NettyInteropTest} is, so the results compare case by case.
 */
@RunWith(JUnit4.class)
public class H2InteropTest extends AbstractInteropTest {
    private CapturingServerBuilder serverBuilder;

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

    /** The same per-operation wait as {@link RdmaInterop}'s. */
    @Override
    protected int operationTimeoutMillis() {
        return Math.max(RdmaInterop.OPERATION_TIMEOUT_FLOOR_MILLIS, super.operationTimeoutMillis());
    }

    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress("127.0.0.1", serverBuilder.port())
                .negotiationType(NegotiationType.PLAINTEXT)
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        InternalNettyChannelBuilder.setStatsEnabled(b, false);
        return b.intercept(createCensusStatsClientInterceptor());
    }

    // The compression cases grpc-interop-testing runs only by name, as NettyInteropTest runs them.

    @Test
    public void clientCompressedUnaryNoProbe() throws Exception {
        clientCompressedUnary(false);
    }

    @Test
    public void clientCompressedStreamingNoProbe() throws Exception {
        clientCompressedStreaming(false);
    }

    @Test
    @Override
    public void serverCompressedStreaming() throws Exception {
        super.serverCompressedStreaming();
    }
}
