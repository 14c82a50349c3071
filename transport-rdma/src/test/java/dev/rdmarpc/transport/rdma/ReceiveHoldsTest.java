package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A SEND's credit is due exactly when its last hold is dropped, whatever order its holds go in. */
class ReceiveHoldsTest {

    @Test
    void aSendNothingWaitsForIsDueAsSoonAsItIsHandled() {
        ReceiveHolds holds = new ReceiveHolds();
        int send = holds.open();
        assertEquals(1, holds.held());
        assertTrue(holds.drop(send));
        assertEquals(0, holds.held());
    }

    @Test
    void aSendWithQueuedFramesIsDueWhenTheLastOfThemIsDeliveredInAnyOrder() {
        ReceiveHolds holds = new ReceiveHolds();
        int a = holds.open();
        holds.hold(a); // a frame queued behind a READ
        holds.hold(a); // an RTS waiting for its READ
        int b = holds.open();
        holds.hold(b);
        assertFalse(holds.drop(a), "handled, but two things of it still wait");
        assertFalse(holds.drop(b));
        assertFalse(holds.drop(a), "the RTS's READ was posted, the frame still waits");
        assertEquals(2, holds.held());
        assertTrue(holds.drop(b));
        assertTrue(holds.drop(a), "its last frame delivered");
        assertEquals(0, holds.held());
    }

    @Test
    void idsAreReusedSoTheTableIsAsLargeAsTheMostSendsHeldAtOnce() {
        ReceiveHolds holds = new ReceiveHolds();
        int[] ids = new int[100];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = holds.open();
        }
        assertEquals(100, holds.held());
        for (int id : ids) {
            assertTrue(holds.drop(id));
        }
        for (int round = 0; round < 1000; round++) {
            int id = holds.open();
            assertTrue(id < 100, "a free id is reused: " + id);
            assertTrue(holds.drop(id));
        }
        assertEquals(0, holds.held());
    }

    @Test
    void droppingMoreThanWasHeldIsABug() {
        ReceiveHolds holds = new ReceiveHolds();
        int send = holds.open();
        holds.drop(send);
        assertThrows(IllegalStateException.class, () -> holds.drop(send));
    }
}
