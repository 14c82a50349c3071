package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The completion poller's spin-then-block cycle loses no completion: thousands of calls, one after another and from
 * several threads at once, with gaps between calls shorter than, about as long as and longer than the spin window, and
 * with bursts of no-op poller tasks between them (the task wake-up path races the CQ arm). Every call must be answered;
 * a completion that lands between the last spin poll and the CQ arm without raising an event would only be found when
 * the poller's idle wait times out, which the poller counts ({@link RdmaMetrics#LOST_WAKEUPS}): that count must stay 0.
 * The gaps shape the load; nothing waits for time to pass before asserting. Runs with whatever {@code spinMicros} the
 * JVM has (the shipped default, and 0 in the guest's event-mode pass).
 */
@Tag("rdma")
class PollerWakeupRdmaTest extends RdmaEndToEndBase {
    private static final int CALLS = Integer.getInteger("rdmarpc.test.wakeupCalls", 2000);
    private static final int THREADS = 4;
    private static final Runnable NO_OP = () -> { };

    @Test
    void everyCallIsAnsweredAcrossGapsAroundTheSpinWindow() throws Exception {
        startServer();
        RpcChannel ch = channel();
        byte[] small = Bytes.pattern(64, 1);
        assertEquals(-1, Bytes.mismatch(small, echo(ch, small, 30_000)));
        assertRdma(ch);
        RdmaDeviceContext context = RdmaTests.context();
        long spinNanos = context.config().spinMicros() * 1000L;
        long window = Math.max(spinNanos, 20_000); // in event mode, gaps around the default window still vary the race
        long[] gaps = {0, window / 8, window / 2, window - 1000, window, window + 1000, 2 * window, 10 * window,
                2_000_000};
        long lostBefore = RdmaMetrics.LOST_WAKEUPS.sum();
        long wakeupsBefore = RdmaMetrics.POLLER_WAKEUPS.sum();
        long t0 = System.nanoTime();

        callsWithGaps(ch, context, gaps, CALLS, 0);
        long sequential = System.nanoTime() - t0;

        long t1 = System.nanoTime();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int offset = t;
            workers.add(CompletableFuture.runAsync(() -> callsWithGaps(ch, context, gaps, CALLS / THREADS, offset),
                    r -> Thread.ofPlatform().daemon().name("wakeup-caller-" + offset).start(r)));
        }
        for (CompletableFuture<Void> w : workers) {
            w.get(RdmaTests.timeout(600_000), TimeUnit.MILLISECONDS);
        }
        long concurrent = System.nanoTime() - t1;

        long lost = RdmaMetrics.LOST_WAKEUPS.sum() - lostBefore;
        log("spinMicros " + context.config().spinMicros() + ": " + CALLS + " calls one at a time in "
                + sequential / 1_000_000 + " ms, " + CALLS + " calls from " + THREADS + " threads in "
                + concurrent / 1_000_000 + " ms; poller wake-ups " + (RdmaMetrics.POLLER_WAKEUPS.sum() - wakeupsBefore)
                + ", lost wake-ups " + lost);
        assertEquals(0, lost, "completions found only after the poller's idle wait timed out");
        assertRdma(ch);
    }

    /** {@code calls} echo calls of 64 B (every 16th of 20 KB: a rendezvous), each after the next gap in turn. */
    private static void callsWithGaps(RpcChannel ch, RdmaDeviceContext context, long[] gaps, int calls, int offset) {
        byte[] small = Bytes.pattern(64, 2 + offset);
        byte[] large = Bytes.pattern(20_000, 3 + offset);
        for (int i = 0; i < calls; i++) {
            int k = i + offset;
            long gap = gaps[k % gaps.length];
            if (k % 5 == 3) {
                for (int n = 0; n < k % 7; n++) {
                    context.poller().execute(NO_OP); // wakes a sleeping poller through the eventfd, not the CQ
                }
            }
            if (gap > 0) {
                LockSupport.parkNanos(gap);
            }
            byte[] req = k % 16 == 15 ? large : small;
            byte[] resp = ClientCalls.blockingUnaryCall(ch, EchoService.ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(RdmaTests.timeout(30_000), TimeUnit.MILLISECONDS), req);
            assertEquals(-1, Bytes.mismatch(req, resp), "call " + i + " of thread " + offset);
        }
    }
}
