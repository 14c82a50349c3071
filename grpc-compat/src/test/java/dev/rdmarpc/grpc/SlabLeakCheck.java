package dev.rdmarpc.grpc;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After each test (servers and channels closed by then), the shared slab pool must be back to the
 * buffers in use before it: whatever grpc-compat did, rdmarpc freed every buffer.
 */
final class SlabLeakCheck implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SlabLeakCheck.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("baseline", SlabPool.shared().inUseBuffers());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        long baseline = context.getStore(NS).get("baseline", Long.class);
        // releases may still be in flight on I/O threads when a test returns
        Await.until(() -> SlabPool.shared().inUseBuffers() <= baseline, () -> (SlabPool.shared().inUseBuffers() - baseline)
                + " slab buffers leaked:\n" + SlabPool.shared().describeLiveBuffers());
    }
}
