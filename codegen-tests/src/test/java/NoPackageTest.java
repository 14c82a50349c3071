import dev.rdmarpc.codegen.tests.Loopback;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The service of a proto file without a package: its classes are in the unnamed package, which only
 * a test in the unnamed package can use.
 */
class NoPackageTest {

    @Test
    void serviceNameHasNoPackage() {
        assertEquals("NoPackage", NoPackageRpc.SERVICE_NAME);
        assertEquals("NoPackage/Ping", NoPackageRpc.getPingMethod().getFullMethodName());
        assertEquals(MethodType.UNARY, NoPackageRpc.getPingMethod().getType());
        assertEquals("NoPackage", new NoPackageRpc.NoPackageImplBase() {
        }.bindService().getServiceName());
    }

    @Test
    @Timeout(60)
    void pingOverLoopback() throws Exception {
        try (Loopback loopback = Loopback.serve(new NoPackageRpc.NoPackageImplBase() {
            @Override
            public void ping(NoPackageOuterClass.Ping request, StreamObserver<NoPackageOuterClass.Ping> responseObserver) {
                responseObserver.onNext(request.toBuilder().setSequence(request.getSequence() + 1).build());
                responseObserver.onCompleted();
            }
        })) {
            RpcChannel channel = loopback.channel();
            NoPackageOuterClass.Ping pong = NoPackageRpc.newBlockingStub(channel)
                    .ping(NoPackageOuterClass.Ping.newBuilder().setSequence(41).build());
            assertEquals(42, pong.getSequence());
        }
    }
}
