package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.testing.Await;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Proves that {@link LeakCheck} would see a leaked Netty buffer: without this the other tests' checks prove nothing. */
class LeakDetectionSelfTest {

    @Test
    void aDroppedBufferIsReported() throws Exception {
        NettyLeakRecorder.install();
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                "run the tests with -Dio.netty.leakDetection.level=paranoid");
        NettyLeakRecorder.clear();
        leakOne();
        Await.until(() -> !collectLeaks().isEmpty(), "a report of the leaked buffer (without one the leak checks are blind)");
        NettyLeakRecorder.clear();
    }

    private static List<String> collectLeaks() {
        try {
            return LeakCheck.collectNettyLeaks();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void leakOne() {
        ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(42);
    }
}
