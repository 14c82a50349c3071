package dev.rdmarpc.grpc;

import dev.rdmarpc.core.WireProtocol;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** {@link GrpcServerInteropTest} with the channel set to {@link WireProtocol#GRPC}: HTTP/2 with prior knowledge from the start. */
@RunWith(JUnit4.class)
public class GrpcServerInteropGrpcTest extends GrpcServerInteropTest {
    @Override
    protected WireProtocol wireProtocol() {
        return WireProtocol.GRPC;
    }
}
