package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fails a test that leaves slab buffers in use (waiting for releases still in flight on I/O threads) or makes Netty
 * report a leaked ByteBuf.
 */
public final class LeakCheck implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LeakCheck.class);

    static {
        NettyLeakRecorder.install();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("inUse", SlabPool.shared().inUseBuffers());
        NettyLeakRecorder.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        long before = context.getStore(NS).get("inUse", Long.class);
        Await.until(() -> SlabPool.shared().inUseBuffers() == before, () -> "slab buffers in use went from " + before
                + " to " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
        List<String> leaks = collectNettyLeaks();
        if (!leaks.isEmpty()) {
            fail("Netty reported " + leaks.size() + " leaked buffer(s):\n" + String.join("\n", leaks));
        }
    }

    /**
     * Collects garbage and makes the detector look at what was collected; returns the reports. The pause gives the
     * collector's reference handling a chance to run: a report it misses is a missed leak, never a false one.
     */
    static List<String> collectNettyLeaks() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
            // In paranoid mode every allocation first reports what the collector found unreleased.
            ByteBuf probe = ByteBufAllocator.DEFAULT.directBuffer(8);
            probe.release();
        }
        return NettyLeakRecorder.leaks();
    }
}
