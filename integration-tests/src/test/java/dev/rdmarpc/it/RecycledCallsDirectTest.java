package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;

/**
 * {@link RecycledCallsTest} with direct executors on both sides: calls end, and their streams go back, on the I/O
 * threads while the test thread starts the next calls.
 */
class RecycledCallsDirectTest extends RecycledCallsTest {
    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.directExecutor();
    }

    @Override
    protected RpcChannel.Builder configureChannel(RpcChannel.Builder b) {
        return b.directExecutor();
    }
}
