import dev.rdmarpc.codegen.tests.Loopback;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * no_package_names.proto: in the unnamed package, a message named dev obscures dev.rdmarpc, and classes of the
 * unnamed package cannot be imported: the generated class imports the rdmarpc classes and works.
 */
class UnnamedPackageNamesTest {

    @Test
    @Timeout(60)
    void callsWorkBesideAMessageNamedDev() throws Exception {
        String source = Files.readString(Path.of("target/generated-test-sources/protobuf/UnnamedRpc.java"));
        assertTrue(source.contains("\nimport dev.rdmarpc.core.StreamObserver;\n"), source.substring(0, 400));

        try (Loopback loopback = Loopback.serve(new UnnamedRpc.UnnamedImplBase() {
            @Override
            public void call(dev request, StreamObserver<Reply> responseObserver) {
                responseObserver.onNext(Reply.newBuilder().setText(request.getText() + "?").build());
                responseObserver.onCompleted();
            }
        })) {
            RpcChannel channel = loopback.channel();
            assertEquals("who?", UnnamedRpc.newBlockingStub(channel).call(dev.newBuilder().setText("who").build()).getText());
        }
    }
}
