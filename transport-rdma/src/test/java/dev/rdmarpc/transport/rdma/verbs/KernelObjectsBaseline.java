package dev.rdmarpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Checks that a verbs test leaves the device's kernel objects (PDs, CQs, QPs, MRs, SRQs, contexts, as
 * {@code rdma resource show} counts them) as it found them. Without the {@code rdma} tool the check is skipped.
 */
final class KernelObjectsBaseline implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KernelObjectsBaseline.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        Map<String, Integer> before = RdmaTestEnv.resourceCounts();
        if (before != null) {
            context.getStore(NS).put("before", before);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        @SuppressWarnings("unchecked")
        Map<String, Integer> before = (Map<String, Integer>) context.getStore(NS).get("before");
        if (before != null) {
            assertEquals(before, RdmaTestEnv.resourceCounts(), "kernel objects of " + RdmaTestEnv.DEVICE
                    + " after " + context.getDisplayName());
        }
    }
}
