package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lock-free queue of off-I/O-thread sends: oldest first, each producer's order kept, nothing lost. */
@ExtendWith(LeakCheck.class)
class WriteQueueTest {

    private static SlabByteBuf send(int producer, int seq) {
        SlabByteBuf b = new SlabByteBufPool(1).wrap(SlabPool.shared().allocate(8).setLength(8));
        b.setInt(0, producer);
        b.setInt(4, seq);
        return b;
    }

    @Test
    void takeAllReturnsOldestFirstWithTails() {
        WriteQueue q = new WriteQueue();
        assertNull(q.takeAll());
        SlabByteBuf a = send(0, 0);
        SlabByteBuf b = send(0, 1);
        SlabByteBuf bTail = send(0, 2);
        b.tail = bTail;
        q.push(a);
        q.push(b);
        SlabByteBuf first = q.takeAll();
        assertTrue(q.isEmpty());
        assertSame(a, first);
        assertSame(b, first.next);
        assertSame(bTail, first.next.tail);
        WriteQueue.releaseAll(first);
        assertEquals(0, a.refCnt());
        assertEquals(0, bTail.refCnt());
    }

    @Test
    void concurrentProducersAndAConsumerLoseNothingAndKeepOrder() throws Exception {
        WriteQueue q = new WriteQueue();
        int producers = 6;
        int each = 20_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int s = 0; s < each; s++) {
                    q.push(send(id, s));
                }
            });
            threads.add(t);
            t.start();
        }
        int[] next = new int[producers];
        AtomicBoolean bad = new AtomicBoolean();
        go.countDown();
        int taken = 0;
        while (taken < producers * each) {
            SlabByteBuf b = q.takeAll();
            while (b != null) {
                SlabByteBuf n = b.next;
                int p = b.getInt(0);
                if (b.getInt(4) != next[p]++) {
                    bad.set(true);
                }
                b.next = null;
                b.release();
                taken++;
                b = n;
            }
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(q.isEmpty());
        assertTrue(!bad.get(), "a producer's sends came out of order");
    }
}
