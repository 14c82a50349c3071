package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Test;

/** The SRQ limit: armed with ibv_modify_srq, it raises IBV_EVENT_SRQ_LIMIT_REACHED once receives run low. */
@Tag("rdma")
@ExtendWith(KernelObjectsBaseline.class)
class SharedReceiveQueueRdmaTest {
    private static final int POSTED = 8;
    private static final int LIMIT = 4;

    @Test
    void raisesTheLimitEventWhenReceivesRunLow() {
        try (LoopbackPair p = new LoopbackPair(16, 64).connect(); Arena arena = Arena.ofConfined()) {
            assertTrue(p.srq.maxWr() >= 16, "SRQ size granted: " + p.srq.maxWr());
            MemorySegment buffers = arena.allocate(256L * POSTED, 4096);
            try (MemoryRegion mr = p.pd.registerMemory(buffers, AccessFlags.LOCAL_WRITE)) {
                ReceiveWorkRequest recv = new ReceiveWorkRequest(arena, 1);
                // post the receives as one chain of two WRs at a time, to exercise chaining
                ReceiveWorkRequest second = new ReceiveWorkRequest(arena, 1);
                for (int i = 0; i < POSTED; i += 2) {
                    recv.clear().wrId(i).sge(0, mr, 256L * i, 256).next(second);
                    second.clear().wrId(i + 1).sge(0, mr, 256L * (i + 1), 256);
                    p.srq.postRecv(recv);
                }
                p.srq.armLimit(LIMIT);
                assertEquals(LIMIT, p.srq.queryLimit());

                AsyncEvent event = new AsyncEvent(arena);
                MemorySegment payload = arena.allocate(32);
                SendWorkRequest send = new SendWorkRequest(arena, 1);
                int sends = POSTED - LIMIT + 1; // leaves LIMIT - 1 receives: below the limit
                for (int i = 0; i < sends; i++) {
                    p.a.postSend(send.clear().wrId(100 + i).opcode(SendWorkRequest.OPCODE_SEND)
                            .flags(SendWorkRequest.FLAG_SIGNALED | SendWorkRequest.FLAG_INLINE)
                            .sge(0, payload.address(), 32, 0));
                    List<Completions.Wc> wcs = p.completions.await(2, timeout(30_000));
                    assertTrue(wcs.stream().allMatch(Completions.Wc::isSuccess), wcs.toString());
                }

                List<String> others = new ArrayList<>();
                long deadline = System.nanoTime() + timeout(30_000) * 1_000_000L;
                while (true) {
                    long left = (deadline - System.nanoTime()) / 1_000_000L;
                    if (left <= 0 || !p.ctx.awaitAsyncEvent(event, left)) {
                        fail("no IBV_EVENT_SRQ_LIMIT_REACHED after " + sends + " receives consumed of " + POSTED
                                + " (limit " + LIMIT + "); other events: " + others);
                    }
                    try {
                        if (event.type() == AsyncEvent.SRQ_LIMIT_REACHED) {
                            log("SRQ limit event: " + event + " (SRQ at 0x" + Long.toHexString(p.srq.address())
                                    + "), other events first: " + others);
                            assertEquals(p.srq.address(), event.elementAddress(), "the event names our SRQ");
                            break;
                        }
                        others.add(event.toString());
                    } finally {
                        event.ack();
                    }
                }
                int limitAfter = p.srq.queryLimit();
                log("SRQ limit after the event: " + limitAfter);
                assertEquals(0, limitAfter, "the limit disarms itself when it fires");
            }
        }
    }

    @Test
    void aFullSrqRefusesWithEnomem() {
        try (LoopbackPair p = new LoopbackPair(16, 64); Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(4096, 4096);
            try (MemoryRegion mr = p.pd.registerMemory(buffer, AccessFlags.LOCAL_WRITE)) {
                ReceiveWorkRequest recv = new ReceiveWorkRequest(arena, 1).sge(0, mr, 0, 64);
                int posted = 0;
                int errno;
                while ((errno = p.srq.tryPostRecv(recv.wrId(posted))) == 0) {
                    posted++;
                    if (posted > 64 * p.srq.maxWr()) {
                        fail("the SRQ never filled up");
                    }
                }
                log("SRQ granted max_wr " + p.srq.maxWr() + ", took " + posted + " receives, then: "
                        + Errno.describe(errno) + ", bad_wr " + (recv.badWrAddress() == recv.address() ? "= the WR" : "?"));
                assertTrue(posted >= p.srq.maxWr(), "at least max_wr receives fit");
                assertEquals(Errno.ENOMEM, errno, "a full SRQ (rxe returns -ENOMEM; folded to ENOMEM)");
                assertEquals(recv.address(), recv.badWrAddress(), "bad_wr names the refused WR");
                VerbsException e = assertThrows(VerbsException.class,
                        () -> p.srq.postRecv(recv));
                assertEquals("ibv_post_srq_recv failed: errno 12 (ENOMEM); the SRQ is full", e.getMessage());
            }
        }
    }
}
