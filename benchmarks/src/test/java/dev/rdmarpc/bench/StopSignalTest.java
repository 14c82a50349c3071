package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stop signal ends waits early. */
class StopSignalTest {

    @Test
    void sleepEndsEarlyOnStop() throws Exception {
        StopSignal s = new StopSignal();
        assertTrue(s.sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30), () -> false));
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException ignored) {
                // test thread
            }
            s.stop();
        });
        t.start();
        long start = System.nanoTime();
        assertFalse(s.sleepUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(30), () -> false));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        t.join();
    }
}
