package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** grpc-java's interop suite over rdmarpc's TCP transport. */
@RunWith(JUnit4.class)
public class RdmaInteropTcpTest extends RdmaInterop {
    @Override
    protected TransportMode mode() {
        return TransportMode.TCP;
    }
}
