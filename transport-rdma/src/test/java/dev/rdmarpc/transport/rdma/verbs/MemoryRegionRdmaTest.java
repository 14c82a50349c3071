package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Memory registration with access flags, its failures, and the PD refusing to go while an MR lives. */
@Tag("rdma")
class MemoryRegionRdmaTest {
    private static final int MIB = 1 << 20;

    @Test
    void registersAndDeregistersWithAccessFlags() {
        Map<String, Integer> before = RdmaTestEnv.resourceCounts();
        try (Arena arena = Arena.ofConfined();
             IbvContext ctx = RdmaTestEnv.openDevice();
             ProtectionDomain pd = ctx.allocProtectionDomain()) {
            MemorySegment memory = arena.allocate(MIB, 4096);
            int access = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE;
            MemoryRegion mr = pd.registerMemory(memory, access);
            try (mr) {
                log("registered " + mr);
                assertEquals(memory.address(), mr.address());
                assertEquals(MIB, mr.length());
                assertEquals(access, mr.access());
                assertNotEquals(0, mr.lkey());
                assertNotEquals(0, mr.rkey());
                try (MemoryRegion localOnly = pd.registerMemory(memory.asSlice(4096, 8192), AccessFlags.LOCAL_WRITE)) {
                    assertEquals(memory.address() + 4096, localOnly.address());
                    assertNotEquals(mr.lkey(), localOnly.lkey(), "each registration has its own key");
                    Map<String, Integer> during = RdmaTestEnv.resourceCounts();
                    if (before != null) {
                        assertEquals(before.get("mr") + 2, during.get("mr"), "two MRs registered");
                        assertEquals(before.get("pd") + 1, during.get("pd"), "one PD");
                    }
                }

                // The PD refuses to go while an MR uses it, and stays usable.
                VerbsException busy = assertThrows(VerbsException.class, pd::close);
                log("dealloc PD with a live MR: " + busy.getMessage());
                assertEquals("ibv_dealloc_pd", busy.call());
                assertEquals(Errno.EBUSY, busy.errno(), busy.getMessage());
                assertFalse(pd.isClosed());
            }
            assertTrue(mr.isClosed());
            mr.close(); // idempotent

            // Remote write without local write is invalid (IB spec, enforced by the kernel).
            VerbsException invalid = assertThrows(VerbsException.class,
                    () -> pd.registerMemory(memory, AccessFlags.REMOTE_WRITE));
            log("REMOTE_WRITE without LOCAL_WRITE: " + invalid.getMessage());
            assertTrue(invalid.call().startsWith("ibv_reg_mr"), invalid.call());
            assertEquals(Errno.EINVAL, invalid.errno(), invalid.getMessage());

            assertThrows(IllegalArgumentException.class, () -> pd.registerMemory(MemorySegment.ofArray(new byte[64]),
                    AccessFlags.LOCAL_WRITE), "heap memory cannot be registered");
        }
        if (before != null) {
            assertEquals(before, RdmaTestEnv.resourceCounts(), "kernel objects after close");
        }
    }
}
