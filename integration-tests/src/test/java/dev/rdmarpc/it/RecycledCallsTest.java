package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many unary calls in flight at once on the paths whose stream objects are recycled (the form generated stubs use,
 * {@code ClientCalls.asyncUnaryCall(channel, ...)}, answered by {@code ServerCalls}' handlers), over a real socket, with
 * the default executors (drains on their threads, calls ending on the I/O threads): while some calls end and give their
 * streams back, others start on them, and every caller must get the answer to its own request and nothing else,
 * whether the server answered it or failed it. Some calls carry a deadline (an hour: both sides arm and disarm a timer
 * on a recycled stream), some one already past (ended before they are sent). Bounded by the number of calls: a call
 * lost to a stream recycled too early shows as calls that never end.
 */
class RecycledCallsTest extends LoopbackTest {
    private static final int CALLS = 20_000;
    private static final int IN_FLIGHT = 64;

    /**
     * Without the lock-checking interceptor and executor: they would take this test off the pooled paths it stresses
     * (an interceptor needs a listener object), and a thread dump per callback would slow its 20,000 calls tenfold.
     */
    @Override
    protected boolean checksLocks() {
        return false;
    }

    @Test
    void everyCallerGetsTheAnswerToItsOwnRequestAndNoOther() throws Exception {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        CountDownLatch done = new CountDownLatch(CALLS);
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < CALLS; i++) {
            assertTrue(slots.tryAcquire(60, TimeUnit.SECONDS), "no call ended for a minute");
            boolean fails = i % 7 == 3;
            boolean late = i % 11 == 5;
            CallOptions options = late ? CallOptions.DEFAULT.withDeadline(Deadline.after(-1, TimeUnit.SECONDS))
                    : i % 3 == 1 ? CallOptions.DEFAULT.withDeadline(Deadline.after(1, TimeUnit.HOURS)) : CallOptions.DEFAULT;
            String text = "call-" + i;
            byte[] request = text.getBytes(StandardCharsets.UTF_8);
            StreamObserver<byte[]> observer = new StreamObserver<>() {
                private byte[] answer;
                private int answers;

                @Override
                public void onNext(byte[] value) {
                    answer = value;
                    answers++;
                }

                @Override
                public void onError(Throwable t) {
                    Status s = Status.fromThrowable(t);
                    boolean expected = late ? s.getCode() == Status.Code.DEADLINE_EXCEEDED
                            : fails && s.getCode() == Status.Code.UNKNOWN && ("the handler broke: " + text).equals(s.getDescription());
                    if (!expected) {
                        problems.add(text + " failed with " + s);
                    }
                    end();
                }

                @Override
                public void onCompleted() {
                    if (fails || late || answers != 1 || !Arrays.equals(request, answer)) {
                        problems.add(text + " got " + answers + " answer(s): "
                                + (answer == null ? "none" : new String(answer, StandardCharsets.UTF_8)));
                    }
                    end();
                }

                private void end() {
                    slots.release();
                    done.countDown();
                }
            };
            ClientCalls.asyncUnaryCall(channel, fails ? TestService.THROW : TestService.ECHO, options, request, observer);
        }
        assertTrue(done.await(5, TimeUnit.MINUTES), done.getCount() + " calls never ended");
        assertEquals(List.of(), List.copyOf(problems));
    }
}
