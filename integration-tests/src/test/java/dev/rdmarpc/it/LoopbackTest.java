package dev.rdmarpc.it;

import dev.rdmarpc.core.CallExecutors;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.core.testing.LockCheckingInterceptors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * A real server and channel on loopback per test, and the slab accounting check after it: every
 * buffer taken during the test, on any path, must be back in the pool. The server's interceptor and the channel's
 * executor check that application code runs under no lock of rdmarpc's ({@link LockCheckingInterceptors}; a subclass
 * may replace the executor).
 */
abstract class LoopbackTest {
    protected TestService service;
    protected RpcServer server;
    protected RpcChannel channel;
    private long baseline;

    /**
     * Whether the server's interceptor and the channel's executor check every callback for locks held (a thread dump of
     * the calling thread each); a subclass that must run without them says why.
     */
    protected boolean checksLocks() {
        return true;
    }

    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b;
    }

    protected RpcChannel.Builder configureChannel(RpcChannel.Builder b) {
        return b;
    }

    @BeforeEach
    void startServerAndChannel() throws IOException {
        baseline = SlabPool.shared().inUseBuffers();
        service = new TestService();
        RpcServer.Builder sb = RpcServer.forPort(0).addService(service.definition());
        server = configureServer(checksLocks() ? sb.intercept(LockCheckingInterceptors.server()) : sb).build().start();
        RpcChannel.Builder cb = RpcChannel.forAddress("127.0.0.1", server.getPort());
        channel = configureChannel(checksLocks()
                ? cb.executor(LockCheckingInterceptors.checkedExecutor(CallExecutors.shared())) : cb).build();
    }

    @AfterEach
    void stopAndCheckForLeaks() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(60, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        assertSlabsBackToBaseline(baseline);
    }

    /** Waits for the slab buffers in use to come back to {@code baseline} (releases may still be in flight). */
    static void assertSlabsBackToBaseline(long baseline) {
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }
}
