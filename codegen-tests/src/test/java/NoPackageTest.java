import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

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
        RpcServer server = RpcServer.forPort(0).addService(new NoPackageRpc.NoPackageImplBase() {
            @Override
            public void ping(NoPackageOuterClass.Ping request, StreamObserver<NoPackageOuterClass.Ping> responseObserver) {
                responseObserver.onNext(request.toBuilder().setSequence(request.getSequence() + 1).build());
                responseObserver.onCompleted();
            }
        }).build().start();
        RpcChannel channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        try {
            NoPackageOuterClass.Ping pong = NoPackageRpc.newBlockingStub(channel)
                    .ping(NoPackageOuterClass.Ping.newBuilder().setSequence(41).build());
            assertEquals(42, pong.getSequence());
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }
}
