package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;

/**
 * Moving a QP whose peer is gone to ERR: how fast outstanding send WRs, and a marker WR posted after the transition,
 * complete with {@code IBV_WC_WR_FLUSH_ERR}. The transport's connection teardown waits for that marker.
 */
@Tag("rdma")
@ExtendWith(KernelObjectsBaseline.class)
class FlushRdmaTest {

    @Test
    void sendsToADeadPeerFlushWhenTheQpGoesToErr() {
        try (LoopbackPair p = new LoopbackPair(8, 64).connect(); Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(4096, 4096);
            try (MemoryRegion mr = p.pd.registerMemory(buf, AccessFlags.LOCAL_WRITE)) {
                p.b.toError(); // the peer is gone: a's SENDs get no ACK and are retried
                SendWorkRequest wr = new SendWorkRequest(arena, 1);
                for (int i = 0; i < 4; i++) {
                    p.a.postSend(wr.clear().wrId(10 + i).opcode(SendWorkRequest.OPCODE_SEND)
                            .flags(SendWorkRequest.FLAG_SIGNALED).sge(0, mr, 0, 1024));
                }
                long t0 = System.nanoTime();
                p.a.toError();
                int errno = p.a.tryPostSend(wr.clear().wrId(99).opcode(SendWorkRequest.OPCODE_SEND)
                        .flags(SendWorkRequest.FLAG_SIGNALED).numSge(0));
                log("marker posted on the ERR QP: errno " + errno);
                List<Completions.Wc> wcs = p.completions.await(errno == 0 ? 5 : 4, timeout(60_000));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                log("flush after ERR took " + ms + " ms: " + wcs);
                assertTrue(wcs.stream().allMatch(w -> w.status() == WorkCompletion.STATUS_WR_FLUSH_ERR
                        || w.status() == WorkCompletion.STATUS_RETRY_EXC_ERR), wcs.toString());
                if (errno == 0) {
                    assertEquals(99, wcs.getLast().wrId(), "the marker completes last");
                }
            }
            MemoryWindowRdmaTest.drainAsyncEvents(p, arena);
        }
    }
}
