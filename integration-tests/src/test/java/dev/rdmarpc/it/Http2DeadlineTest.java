package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A call whose deadline passes on the server ends, for an HTTP/2 client, as grpc-java's server ends it: RST_STREAM with
 * CANCEL, not trailers, so a client past its own deadline reports DEADLINE_EXCEEDED in its own words whichever side's
 * timer fires first.
 */
class Http2DeadlineTest {
    private static final int END_STREAM = 0x1;
    private static final int CANCEL = 0x8;

    @Test
    void aDeadlinePassedOnTheServerResetsTheStream() throws Exception {
        long baseline = SlabPool.shared().inUseBuffers();
        RpcServer server = RpcServer.forPort(0).addService(new TestService().definition()).build().start();
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            // a unary call the server never answers, with a deadline and no client of its own to time it out
            c.headers(1, RawH2Client.request("Hang").add("grpc-timeout", "50m"), false)
                    .frame(RawH2Client.DATA, 1, END_STREAM, new byte[] {0, 0, 0, 0, 0}).flush();
            List<RawH2Client.Frame> frames = c.framesUntil(f -> f.streamId() == 1
                    && (f.type() == RawH2Client.RST_STREAM || (f.type() == RawH2Client.HEADERS && (f.flags() & END_STREAM) != 0)));
            RawH2Client.Frame last = frames.get(frames.size() - 1);
            assertEquals(RawH2Client.RST_STREAM, last.type(), "the stream ends with RST_STREAM, not trailers: " + frames);
            assertEquals(CANCEL, ((last.payload()[0] & 0xff) << 24) | ((last.payload()[1] & 0xff) << 16)
                    | ((last.payload()[2] & 0xff) << 8) | (last.payload()[3] & 0xff));
            assertFalse(c.resetByServer);
        } finally {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }
}
