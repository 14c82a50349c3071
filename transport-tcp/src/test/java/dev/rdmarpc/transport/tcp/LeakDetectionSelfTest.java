package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Proves that {@link LeakCheck} would see a leaked Netty buffer: without this the other tests' checks prove nothing. */
class LeakDetectionSelfTest {

    @Test
    void aDroppedBufferIsReported() throws Exception {
        NettyLeakRecorder.install();
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                "run the tests with -Dio.netty.leakDetection.level=paranoid");
        NettyLeakRecorder.clear();
        leakOne();
        long deadline = System.currentTimeMillis() + 10_000;
        while (NettyLeakRecorder.leaks().isEmpty() && System.currentTimeMillis() < deadline) {
            LeakCheck.collectNettyLeaks();
        }
        assertTrue(!NettyLeakRecorder.leaks().isEmpty(), "a leaked buffer went unreported: the leak checks are blind");
        NettyLeakRecorder.clear();
    }

    private static void leakOne() {
        ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(42);
    }
}
