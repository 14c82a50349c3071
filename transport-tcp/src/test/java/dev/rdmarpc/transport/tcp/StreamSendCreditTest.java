package dev.rdmarpc.transport.tcp;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The HTTP/2 bridges give core's send window back as core's own receivers do: at half a window, or when it runs low. */
class StreamSendCreditTest {
    private static final int WINDOW = 1 << 20;

    @Test
    void smallMessagesAreHeldUntilHalfTheWindowIsOwed() {
        StreamSendCredit c = new StreamSendCredit(WINDOW);
        int owed = 0;
        for (int i = 0; i < 127; i++) { // 127 × 4 KiB: under half
            c.sent(4096);
            assertEquals(0, c.written(4096), "message " + i);
            owed += 4096;
        }
        c.sent(4096);
        assertEquals(owed + 4096, c.written(4096));
        c.sent(4096);
        assertEquals(0, c.written(4096), "counting starts again");
    }

    @Test
    void creditGoesBackOnceTheWindowCoreHasLeftFallsBelowHalf() {
        StreamSendCredit c = new StreamSendCredit(WINDOW);
        c.sent(100);
        c.sent(WINDOW / 2); // in flight: core has less than half its window left
        assertEquals(100, c.written(100), "the sender runs low: what is owed goes back at once");
        assertEquals(WINDOW / 2, c.written(WINDOW / 2));
    }

    @Test
    void aWholeWindowInOneFrameComesBackWhenWritten() {
        StreamSendCredit c = new StreamSendCredit(WINDOW);
        c.sent(WINDOW);
        assertEquals(WINDOW, c.written(WINDOW));
        c.sent(10);
        assertEquals(0, c.written(10));
    }
}
