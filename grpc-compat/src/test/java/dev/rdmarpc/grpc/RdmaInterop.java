package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;
import io.grpc.testing.integration.AbstractInteropTest;

import java.net.InetSocketAddress;

/**
 * grpc-java's interop suite ({@link AbstractInteropTest}) with an {@link RdmaServerBuilder} server
 * and an {@link RdmaChannelBuilder} channel on 127.0.0.1, for one transport mode. Configured like
 * grpc's own Netty interop test: a small flow-control window, 16 MiB messages, grpc's census stats
 * replaced by the suite's recording ones.
 */
public abstract class RdmaInterop extends AbstractInteropTest {
    private CapturingServerBuilder serverBuilder;

    /** The transport both sides are forced to. */
    protected abstract TransportMode mode();

    @Override
    protected ServerBuilder<?> getServerBuilder() {
        RdmaServerBuilder b = RdmaServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .transportMode(mode())
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        serverBuilder = new CapturingServerBuilder(b.addStreamTracerFactory(createCustomCensusTracerFactory()));
        return serverBuilder;
    }

    /**
     * The suite's per-operation wait (for answers that must come), scaled for slow hosts (the RDMA guest sets
     * rdmarpc.test.timeoutScale) and never below {@link #OPERATION_TIMEOUT_FLOOR_MILLIS}: a bound for a hung test only.
     */
    @Override
    protected int operationTimeoutMillis() {
        double scale = Math.max(1.0, Double.parseDouble(System.getProperty("rdmarpc.test.timeoutScale", "1")));
        return (int) Math.max(OPERATION_TIMEOUT_FLOOR_MILLIS, super.operationTimeoutMillis() * scale);
    }

    /** The least per-operation wait of the interop suites here (grpc's default, 5 s, is tight on a busy machine). */
    static final int OPERATION_TIMEOUT_FLOOR_MILLIS = 30_000;

    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        RdmaChannelBuilder b = RdmaChannelBuilder.forAddress("127.0.0.1", serverBuilder.port())
                .transportMode(mode())
                .flowControlWindow(TEST_FLOW_CONTROL_WINDOW)
                .maxInboundMessageSize(MAX_MESSAGE_SIZE);
        b.setStatsEnabled(false);
        return b.intercept(createCensusStatsClientInterceptor());
    }
}
