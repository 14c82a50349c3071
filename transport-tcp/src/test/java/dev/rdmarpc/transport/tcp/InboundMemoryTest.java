package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connections that announce large frames and then send nothing make the server hold only the bytes they sent, and
 * a well-behaved client is served meanwhile.
 */
@ExtendWith(LeakCheck.class)
class InboundMemoryTest {
    private static final int STALLED = 200;
    /** What a stalled connection may make the decoder hold: its own few bytes, rounded up to a small buffer. */
    private static final int HELD_PER_CONNECTION = 1024;

    /** Bytes the connection's decoder holds, read on its I/O thread. */
    private static int held(TcpFrameConnection c) {
        try {
            return c.bufferedInputCapacity();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void headersAnnouncingTheMaximumFollowedByNothingHoldAlmostNothing(String io) throws Exception {
        RecordingHandler.Factory handlers = new RecordingHandler.Factory(true);
        List<RawClient> raws = new ArrayList<>();
        try (EchoLoop loop = new EchoLoop(io, handlers, 0)) {
            List<TcpFrameConnection> stalled = new ArrayList<>();
            for (int i = 0; i < STALLED; i++) {
                RawClient raw = new RawClient(loop.address);
                raws.add(raw);
                ByteArrayOutputStream w = new ByteArrayOutputStream();
                if (i % 2 == 0) {
                    // after HELLO: a MESSAGE header announcing the largest payload allowed
                    w.write(TestFrames.helloWire());
                    w.write(TestFrames.headerWire(FrameType.MESSAGE, 1, FrameHeader.DEFAULT_MAX_PAYLOAD));
                } else {
                    // before HELLO: a HELLO header announcing the largest first frame allowed
                    w.write(TestFrames.headerWire(FrameType.HELLO, 0, FrameDecoder.PRE_HELLO_MAX_PAYLOAD));
                }
                raw.write(w.toByteArray());
                stalled.add((TcpFrameConnection) handlers.next().connection);
            }
            Await.until(() -> {
                for (TcpFrameConnection c : stalled) {
                    if (held(c) == 0) {
                        return false;
                    }
                }
                return true;
            }, "every stalled connection's header read by the server");
            long total = 0;
            for (TcpFrameConnection c : stalled) {
                int held = c.bufferedInputCapacity();
                assertTrue(held <= HELD_PER_CONNECTION, c + " holds " + held + " bytes for one header");
                total += held;
            }
            assertTrue(total <= (long) STALLED * HELD_PER_CONNECTION, "stalled connections hold " + total + " bytes");

            RecordingHandler good = loop.connect();
            good.connection.send(TestFrames.hello());
            byte[] p = TestFrames.pattern(1, 2, 100_000);
            good.connection.send(TestFrames.message(3, p));
            assertEquals(FrameType.HELLO, good.nextFrame().type());
            assertArrayEquals(p, good.nextFrame().payload());
        } finally {
            for (RawClient raw : raws) {
                raw.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void aFirstFrameLargerThanTheHelloLimitClosesTheConnection(String io) throws Exception {
        RecordingHandler.Factory handlers = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, handlers, 0);
             RawClient raw = new RawClient(loop.address)) {
            raw.write(TestFrames.headerWire(FrameType.HELLO, 0, FrameHeader.DEFAULT_MAX_PAYLOAD));
            RecordingHandler server = handlers.next();
            server.awaitClosed();
            assertTrue(server.closedReason.contains("frame length " + FrameHeader.DEFAULT_MAX_PAYLOAD
                    + " exceeds the maximum " + FrameDecoder.PRE_HELLO_MAX_PAYLOAD + " (HELLO)"), server.closedReason);
            assertTrue(raw.awaitServerClose(60_000), "the server kept the connection open");
        }
    }
}
