package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannelBuilder;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedChannelImplBuilder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link GrpcServerInteropTest} as a channel runs it when grpc-netty is not on the class path: the channel's factory
 * has no grpc-netty transports, so core's HTTP/2 bridge carries every call to the stock server (the factory made here
 * as {@link RdmaChannelBuilder} makes it, without them).
 */
@RunWith(JUnit4.class)
public class GrpcServerInteropBridgeTest extends GrpcServerInteropTest {
    @Override
    protected ManagedChannelBuilder<?> createChannelBuilder() {
        ClientSettings settings = new ClientSettings(TransportMode.AUTO, MAX_MESSAGE_SIZE,
                GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE, TEST_FLOW_CONTROL_WINDOW, 20_000,
                GrpcUtil.KEEPALIVE_TIME_NANOS_DISABLED, GrpcUtil.DEFAULT_KEEPALIVE_TIMEOUT_NANOS, false);
        ManagedChannelImplBuilder b = new ManagedChannelImplBuilder("127.0.0.1:" + serverBuilder.port(),
                () -> new RdmaClientTransportFactory(settings, null), () -> GrpcUtil.DEFAULT_PORT_PLAINTEXT);
        b.proxyDetector(GrpcUtil.NOOP_PROXY_DETECTOR);
        b.setStatsEnabled(false);
        return b.intercept(createCensusStatsClientInterceptor());
    }
}
