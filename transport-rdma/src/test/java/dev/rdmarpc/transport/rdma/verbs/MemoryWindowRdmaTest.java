package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;

/**
 * Type-2 memory windows, the per-call rendezvous grant: bind a window over part of a region (BIND_MW WR), let the
 * peer RDMA-READ through its rkey, invalidate it (LOCAL_INV), and see the next READ refused.
 */
@Tag("rdma")
@ExtendWith(KernelObjectsBaseline.class)
class MemoryWindowRdmaTest {
    private static final int SIGNALED = SendWorkRequest.FLAG_SIGNALED;

    @Test
    void aBoundType2WindowGrantsReadUntilInvalidated() {
        try (LoopbackPair p = new LoopbackPair(8, 64).connect(); Arena arena = Arena.ofConfined()) {
            DeviceAttributes dev = p.ctx.queryDevice();
            assumeTrue(dev.supportsMemoryWindowType2(), "device has no type-2 memory windows");
            MemorySegment source = arena.allocate(64 * 1024, 4096);
            MemorySegment target = arena.allocate(8192, 4096);
            LoopbackRdmaTest.fill(source, 9);
            try (MemoryRegion sourceMr = p.pd.registerMemory(source,
                         AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ | AccessFlags.MW_BIND);
                 MemoryRegion targetMr = p.pd.registerMemory(target, AccessFlags.LOCAL_WRITE);
                 MemoryWindow mw = p.pd.allocMemoryWindow(MemoryWindow.TYPE_2)) {
                assertEquals(MemoryWindow.TYPE_2, mw.type());
                long windowAddress = sourceMr.address() + 4096;
                int rkey = MemoryWindow.nextRkey(mw.rkey());
                SendWorkRequest wr = new SendWorkRequest(arena, 1);

                // bind on b: the QP through which the peer (a) will read
                p.b.postSend(wr.clear().wrId(1).flags(SIGNALED)
                        .bindMemoryWindow(mw, rkey, sourceMr, windowAddress, 8192, AccessFlags.REMOTE_READ));
                Completions.Wc bind = p.completions.await(1, timeout(30_000)).getFirst();
                log("bind type-2 window: " + bind + ", rkey 0x" + Integer.toHexString(rkey) + " (MR rkey 0x"
                        + Integer.toHexString(sourceMr.rkey()) + ")");
                assertTrue(bind.isSuccess(), bind.text());
                assertEquals(WorkCompletion.OPCODE_BIND_MW, bind.opcode(), bind.text());
                assertNotEquals(sourceMr.rkey(), rkey);

                p.a.postSend(wr.clear().wrId(2).opcode(SendWorkRequest.OPCODE_RDMA_READ).flags(SIGNALED)
                        .remote(windowAddress, rkey).sge(0, targetMr, 0, 8192));
                Completions.Wc read = p.completions.await(1, timeout(30_000)).getFirst();
                log("READ through the window: " + read);
                assertTrue(read.isSuccess(), read.text());
                assertEquals(8192, read.byteLen());
                assertEquals(-1, source.asSlice(4096, 8192).mismatch(target));

                p.b.postSend(wr.clear().wrId(3).opcode(SendWorkRequest.OPCODE_LOCAL_INV).flags(SIGNALED)
                        .invalidateRkey(rkey));
                Completions.Wc inv = p.completions.await(1, timeout(30_000)).getFirst();
                log("LOCAL_INV of the window: " + inv);
                assertTrue(inv.isSuccess(), inv.text());
                assertEquals(WorkCompletion.OPCODE_LOCAL_INV, inv.opcode(), inv.text());

                p.a.postSend(wr.clear().wrId(4).opcode(SendWorkRequest.OPCODE_RDMA_READ).flags(SIGNALED)
                        .remote(windowAddress, rkey).sge(0, targetMr, 0, 8192));
                Completions.Wc refused = p.completions.await(1, timeout(30_000)).getFirst();
                log("READ after invalidation: " + refused);
                assertEquals(WorkCompletion.STATUS_REM_ACCESS_ERR, refused.status(), refused.text());
            }
            drainAsyncEvents(p, arena);
        }
    }

    static void drainAsyncEvents(LoopbackPair p, Arena arena) {
        AsyncEvent event = new AsyncEvent(arena);
        while (p.ctx.awaitAsyncEvent(event, timeout(100))) {
            log("async event: " + event);
            event.ack();
        }
    }
}
