package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** grpc-java's interop suite over rdmarpc's TCP transport, with its compression cases. */
@RunWith(JUnit4.class)
public class RdmaInteropTcpTest extends RdmaInterop {
    @Override
    protected TransportMode mode() {
        return TransportMode.TCP;
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
