package dev.rdmarpc.grpc;

import dev.rdmarpc.core.TransportMode;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * grpc-java's interop suite over RDMA (both sides forced to it). Not run by surefire directly (its
 * name matches no test pattern): {@link RdmaInteropOverRdmaTest}, tagged "rdma", runs it case by case.
 */
@RunWith(JUnit4.class)
public class RdmaInteropRdma extends RdmaInterop {
    @Override
    protected TransportMode mode() {
        return TransportMode.RDMA;
    }
}
