package dev.rdmarpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;

/**
 * Event-mode completion waiting for tests: arm ({@code ibv_req_notify_cq}) before posting, then block on the
 * channel ({@code ibv_get_cq_event}), ack ({@code ibv_ack_cq_events}), re-arm, drain ({@code ibv_poll_cq}).
 * Busy polling crawls in the emulated guest.
 */
final class Completions {
    /** A copied work completion. */
    record Wc(long wrId, int status, int opcode, int byteLen, boolean hasImm, int imm, int qpNum, String text) {
        boolean isSuccess() {
            return status == WorkCompletion.STATUS_SUCCESS;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final WorkCompletionBatch batch;
    private int events;
    private boolean armed;

    Completions(Arena arena, CompletionQueue cq, CompletionChannel channel) {
        this.cq = cq;
        this.channel = channel;
        this.batch = new WorkCompletionBatch(arena, 16);
    }

    /** Completion events taken from the channel so far. */
    int events() {
        return events;
    }

    /**
     * Arms the CQ ({@code ibv_req_notify_cq}). Call it before posting the first work request: on rxe a loopback
     * post often completes inside the post call, and a completion that lands before arming raises no event.
     * {@link #await} leaves the CQ armed, so later posts need no new call.
     */
    void arm() {
        cq.requestNotify(false);
        armed = true;
    }

    /**
     * Waits for exactly {@code count} completions in event mode: block on the channel ({@code ibv_get_cq_event}),
     * acknowledge, re-arm, drain the CQ; repeat. Fails on timeout or if more completions arrive than expected.
     */
    List<Wc> await(int count, long timeoutMillis) {
        if (!armed) {
            throw new IllegalStateException("arm() the CQ before posting");
        }
        List<Wc> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (out.size() < count) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            CompletionQueue signalled = left <= 0 ? null : channel.awaitEvent(left);
            if (signalled == null) {
                fail("no completion event within " + timeoutMillis + " ms; waiting for " + count
                        + " completions, got " + out);
            }
            if (signalled != cq) {
                fail("event for an unexpected CQ");
            }
            events++;
            cq.ackEvents(1);
            cq.requestNotify(false); // re-arm before draining: nothing that lands after the drain is missed
            drain(out);
        }
        if (out.size() > count) {
            fail("expected " + count + " completions, got " + out);
        }
        return out;
    }

    private void drain(List<Wc> out) {
        int n;
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch.get(i);
                out.add(new Wc(wc.wrId(), wc.status(), wc.opcode(), wc.byteLength(), wc.hasImmData(), wc.immData(),
                        wc.qpNum(), wc.describe()));
            }
        }
    }

    /** The one completion with {@code wrId}. */
    static Wc byWrId(List<Wc> wcs, long wrId) {
        return wcs.stream().filter(w -> w.wrId() == wrId).findFirst()
                .orElseThrow(() -> new AssertionError("no completion with wr_id " + wrId + " in " + wcs));
    }

    /** The one receive completion. */
    static Wc receive(List<Wc> wcs) {
        return wcs.stream().filter(w -> w.isSuccess() && (w.opcode() & WorkCompletion.OPCODE_RECV) != 0).findFirst()
                .orElseThrow(() -> new AssertionError("no receive completion in " + wcs));
    }
}
