package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.GID_INDEX;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.PORT;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.log;
import static dev.rdmarpc.transport.rdma.verbs.RdmaTestEnv.timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** QP state transitions: invalid ones, a wrong remote QPN, and what the device grants (max_inline_data). */
@Tag("rdma")
class QueuePairRdmaTest {
    /** A QPN nobody has: rxe numbers QPs from 17 upwards. */
    private static final int BOGUS_QPN = 0xABCDE;

    @Test
    void anInvalidTransitionFailsWithTheCallAndErrno() {
        try (LoopbackPair p = new LoopbackPair(8, 64)) {
            assertEquals(QpState.RESET, p.a.queryState());
            VerbsException e = assertThrows(VerbsException.class, () -> p.a.toRts(RtsParameters.defaults(1)));
            log("RESET→RTS: " + e.getMessage());
            assertEquals("ibv_modify_qp(RTS) failed: errno 22 (EINVAL)", e.getMessage());
            assertEquals(QpState.RESET, p.a.queryState(), "a failed transition leaves the state alone");

            p.a.toInit(PORT, LoopbackPair.QP_ACCESS);
            VerbsException noAv = assertThrows(VerbsException.class, () -> p.a.toRts(RtsParameters.defaults(1)));
            assertEquals("ibv_modify_qp(RTS) failed: errno 22 (EINVAL)", noAv.getMessage(), "INIT→RTS skips RTR");
            assertEquals(QpState.INIT, p.a.queryState());
        }
    }

    @Test
    void aWrongRemoteQpnConnectsButTheFirstSendFailsWithRetryExceeded() {
        Map<String, Integer> before = RdmaTestEnv.resourceCounts();
        try (LoopbackPair p = new LoopbackPair(8, 64); Arena arena = Arena.ofConfined()) {
            QueuePair qp = p.a;
            qp.toInit(PORT, LoopbackPair.QP_ACCESS);
            VerbsException transitionError = null;
            try {
                qp.toRtr(RtrParameters.roce(BOGUS_QPN, 0, p.gid, GID_INDEX, PORT, p.port.activeMtu()));
                // short ACK timeout (4.096 µs × 2^10 ≈ 4 ms) and one retry: the failure comes quickly
                qp.toRts(new RtsParameters(0, 10, 1, 0, 1));
            } catch (VerbsException e) {
                transitionError = e;
            }
            if (transitionError != null) {
                // Devices that check the QPN reject the transition itself: that must be a clear error.
                log("wrong remote QPN: transition failed: " + transitionError.getMessage());
                assertTrue(transitionError.getMessage().matches(
                        "ibv_modify_qp\\((RTR|RTS)\\) failed: errno \\d+ \\(E[A-Z0-9]+\\)"), transitionError.getMessage());
                return;
            }
            assertEquals(QpState.RTS, qp.queryState(), "RC does not check the remote QPN when connecting");

            MemorySegment payload = arena.allocate(16);
            SendWorkRequest wr = new SendWorkRequest(arena, 1).wrId(7).opcode(SendWorkRequest.OPCODE_SEND)
                    .flags(SendWorkRequest.FLAG_SIGNALED | SendWorkRequest.FLAG_INLINE)
                    .sge(0, payload.address(), 16, 0);
            long start = System.nanoTime();
            qp.postSend(wr);
            Completions.Wc wc = p.completions.await(1, timeout(30_000)).getFirst();
            long millis = (System.nanoTime() - start) / 1_000_000;
            log("wrong remote QPN: RESET→INIT→RTR→RTS succeeded; the SEND completed after " + millis + " ms with "
                    + wc + "; QP state now " + QpState.name(qp.queryState()));
            assertEquals(7, wc.wrId());
            assertEquals(WorkCompletion.STATUS_RETRY_EXC_ERR, wc.status(), wc.text());
            assertTrue(wc.text().contains("IBV_WC_RETRY_EXC_ERR (12)"), wc.text());
            assertEquals(QpState.ERR, qp.queryState(), "a fatal completion error moves the QP to ERR");

            // Posting to a QP in ERR is accepted and flushed, or refused: either way never silently lost.
            int errno = qp.tryPostSend(wr.wrId(8));
            if (errno == 0) {
                Completions.Wc flushed = p.completions.await(1, timeout(30_000)).getFirst();
                log("post after ERR: " + flushed);
                assertEquals(WorkCompletion.STATUS_WR_FLUSH_ERR, flushed.status(), flushed.text());
            } else {
                log("post after ERR refused: " + Errno.describe(errno));
            }

            // Any async events the error raised must be read and acknowledged before the QP is destroyed.
            List<String> events = new ArrayList<>();
            AsyncEvent event = new AsyncEvent(arena);
            while (p.ctx.awaitAsyncEvent(event, timeout(200))) {
                events.add(AsyncEvent.typeName(event.type()));
                event.ack();
            }
            log("async events after the failure: " + events);
        }
        if (before != null) {
            assertEquals(before, RdmaTestEnv.resourceCounts(), "kernel objects after close");
        }
    }

    @Test
    void reportsWhatTheDeviceGrants() {
        try (LoopbackPair p = new LoopbackPair(8, 64)) {
            QueuePairCaps caps = p.a.caps();
            log("asked max_send_wr 16, max_send_sge 2, max_inline_data 64; got " + caps);
            assertTrue(caps.maxSendWr() >= 16 && caps.maxSendSge() >= 2 && caps.maxInlineData() >= 64);
            int largest = 0;
            for (int inline = 64; inline <= 64 * 1024; inline *= 2) {
                try (QueuePair qp = p.pd.createQueuePair(QueuePairConfig.rc(p.cq, p.srq, 16, 1, inline))) {
                    largest = qp.caps().maxInlineData();
                } catch (VerbsException e) {
                    log("max_inline_data " + inline + " refused: " + e.getMessage());
                    break;
                }
            }
            log("largest max_inline_data granted: " + largest);
            assertTrue(largest >= 64);
        }
    }

    @Test
    void inlineDataOverTheGrantedMaximumIsRefused() {
        try (LoopbackPair p = new LoopbackPair(8, 64).connect(); Arena arena = Arena.ofConfined()) {
            int max = p.a.caps().maxInlineData();
            MemorySegment payload = arena.allocate(max + 1);
            SendWorkRequest wr = new SendWorkRequest(arena, 1).wrId(1).opcode(SendWorkRequest.OPCODE_SEND)
                    .flags(SendWorkRequest.FLAG_SIGNALED | SendWorkRequest.FLAG_INLINE)
                    .sge(0, payload.address(), max + 1, 0);
            VerbsException e = assertThrows(VerbsException.class, () -> p.a.postSend(wr));
            log("inline SEND of " + (max + 1) + " bytes (max_inline_data " + max + "): " + e.getMessage());
            assertEquals(Errno.EINVAL, e.errno(), e.getMessage());
            assertTrue(e.getMessage().startsWith("ibv_post_send(IBV_WR_SEND) failed: errno 22 (EINVAL)"), e.getMessage());
            assertEquals(wr.address(), wr.badWrAddress(), "bad_wr names the refused WR");
            assertEquals(QpState.RTS, p.a.queryState(), "a refused post does not break the QP");
        }
    }
}
