package dev.rdmarpc.grpc;

import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;
import io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.testing.integration.AbstractInteropTest;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

import java.net.InetSocketAddress;

/**
 * The reference: the same interop suite with stock grpc-netty on both sides, configured as
 * {@link RdmaInterop} is, run in the same build so the two results can be compared case by case.
 */
@RunWith(JUnit4.class)
public class NettyInteropTest extends AbstractInteropTest {
    /** The server being built, whose port the channel dials (set by getServerBuilder). */
    CapturingServerBuilder serverBuilder;

    @Override
    protected ServerBuilder<?> getServerBuilder() {
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        InternalNettyServerBuilder.setStatsEnabled(b, false);
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

    // The suite's other compression cases are not JUnit tests in grpc-interop-testing (its interop
    // client runs them by name); they run here without the probe, which needs a server that checks
    // expect_compressed (grpc-java's TestServiceImpl does not).

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
