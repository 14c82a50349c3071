package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.InputStream;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A reader that does not keep up makes the connection unwritable; onWritable follows when it drains. */
@ExtendWith(LeakCheck.class)
class WritabilityTest {

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void slowReaderTurnsWritabilityOffAndDrainingTurnsItBackOn(String io) throws Exception {
        RecordingHandler.Factory serverHandlers = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, serverHandlers, 0);
             RawClient slowReader = new RawClient(loop.address)) {
            slowReader.socket.setReceiveBufferSize(64 * 1024);
            RecordingHandler server = serverHandlers.next();
            FrameConnection c = server.connection;
            assertTrue(c.isWritable());
            byte[] chunk = new byte[64 * 1024];
            long sent = 0;
            // the bound only ends a hung test: the high-water mark is normally passed within a second
            long deadline = System.nanoTime() + Await.DEFAULT_BOUND.toNanos();
            // The peer reads nothing: socket buffers fill, then Netty's outbound buffer passes the high-water mark.
            // Kernel buffers grow as they fill, so writability may come back on its own: fill until it stays off.
            int writableCallsBefore;
            do {
                while (c.isWritable() && System.nanoTime() - deadline < 0) {
                    c.send(TestFrames.message(1, chunk));
                    sent += chunk.length + 16;
                    if (sent % (4 << 20) < chunk.length + 16) {
                        Thread.sleep(5); // let the I/O thread write what is queued (how long it takes does not matter)
                    }
                }
                writableCallsBefore = server.writableCalls.get();
            } while (c.isWritable() && System.nanoTime() - deadline < 0);
            assertFalse(c.isWritable(), "still writable after " + sent + " bytes");

            long total = sent;
            AtomicLong received = new AtomicLong();
            Thread reader = new Thread(() -> {
                try {
                    InputStream in = slowReader.socket.getInputStream();
                    byte[] buf = new byte[256 * 1024];
                    int n;
                    while (received.get() < total && (n = in.read(buf)) > 0) {
                        received.addAndGet(n);
                    }
                } catch (Exception e) {
                    // the test's asserts say what went wrong
                }
            }, "slow-reader");
            reader.start();
            reader.join(Await.DEFAULT_BOUND.toMillis());
            assertEquals(total, received.get(), "the reader did not get everything that was sent");
            int before = writableCallsBefore;
            Await.until(() -> server.writableCalls.get() > before, "onWritable once the reader drained the connection");
            assertTrue(c.isWritable());
        }
    }
}
