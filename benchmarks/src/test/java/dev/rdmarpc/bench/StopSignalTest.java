package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stop signal ends waits early. */
class StopSignalTest {
    /** A deadline no test reaches unless the signal is broken. */
    private static final long HUNG_NANOS = TimeUnit.MINUTES.toNanos(2);

    @Test
    void waitsUntilTheDeadlineWhenNothingHappens() {
        StopSignal s = new StopSignal();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30);
        assertTrue(s.sleepUntil(deadline, () -> false));
        assertTrue(System.nanoTime() - deadline >= 0);
    }

    @Test
    void sleepEndsEarlyOnStop() throws Exception {
        StopSignal s = new StopSignal();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread stopper = new Thread(() -> {
            try {
                waiting.await();
                s.stop();
            } catch (InterruptedException ignored) {
                // the test ended
            }
        });
        stopper.start();
        assertFalse(s.sleepUntil(System.nanoTime() + HUNG_NANOS, () -> {
            waiting.countDown();
            return false;
        }));
        assertTrue(s.isStopped());
        stopper.join();
    }

    @Test
    void sleepEndsEarlyWhenTheConditionHolds() {
        StopSignal s = new StopSignal();
        AtomicBoolean done = new AtomicBoolean();
        Thread.ofPlatform().start(() -> done.set(true));
        assertFalse(s.sleepUntil(System.nanoTime() + HUNG_NANOS, done::get));
        assertFalse(s.isStopped());
    }
}
