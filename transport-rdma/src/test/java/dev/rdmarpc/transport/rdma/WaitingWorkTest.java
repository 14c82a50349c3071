package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.RendezvousGrants.Grant;

import java.util.ArrayDeque;
import org.junit.jupiter.api.Test;

/** The typed queue of waiting work keeps every kind in order, with its fields, while it grows around its end. */
class WaitingWorkTest {
    private final SlabPool pool = new SlabPool(0, false);

    @Test
    void entriesOfEveryKindComeOutInOrderAcrossGrowth() {
        WaitingWork w = new WaitingWork();
        ArrayDeque<Object> expected = new ArrayDeque<>();
        long baseline = pool.inUseBuffers();
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < 7 + round * 9; i++) { // more than the initial capacity, starting mid-ring
                switch (i % 3) {
                    case 0 -> {
                        SlabBuffer b = pool.allocate(100).setLength(40 + i);
                        w.addSend(b);
                        expected.add(b);
                    }
                    case 1 -> {
                        Grant g = new Grant();
                        w.addBind(g);
                        expected.add(g);
                    }
                    default -> {
                        Grant g = new Grant();
                        w.addInvalidate(g);
                        expected.add(g);
                    }
                }
            }
            long bytes = expected.stream().filter(o -> o instanceof SlabBuffer)
                    .mapToLong(o -> ((SlabBuffer) o).length()).sum();
            assertEquals(bytes, w.bytes());
            for (int i = 0; i < 5; i++) {
                Object e = expected.poll();
                byte kind = w.peekKind();
                assertSame(e, w.peekRef());
                assertTrue(e instanceof SlabBuffer ? kind == WaitingWork.SEND
                        : kind == WaitingWork.BIND || kind == WaitingWork.INVALIDATE);
                w.poll();
                if (e instanceof SlabBuffer b) {
                    b.release();
                }
            }
        }
        w.releaseAll(new RendezvousGrants(null, false));
        assertTrue(w.isEmpty());
        assertEquals(0, w.bytes());
        assertEquals(baseline, pool.inUseBuffers());
    }
}
