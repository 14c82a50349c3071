package dev.rdmarpc.it;

import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A large message an HTTP/2 client sends is admitted on its 5-byte prefix, and its stream's window then grows to what
 * the server's stream window takes of it: the client may send the whole message without waiting for credit every
 * 32 KiB, as it may to a grpc-java server with its 1 MiB windows.
 */
class Http2AdmittedWindowTest {
    private static final int WINDOW_UPDATE = 0x8;
    private static final int END_STREAM = 0x1;
    private static final int MAX_FRAME = 16_384;
    private static final int BIG = 1 << 20;

    @Test
    void anAdmittedLargeMessageIsSentWholeOnTheCreditGrantedAtItsPrefix() throws Exception {
        long baseline = SlabPool.shared().inUseBuffers();
        RpcServer server = RpcServer.forPort(0).addService(new TestService().definition()).build().start();
        try (RawH2Client c = new RawH2Client(server.getPort())) {
            // room for the echo: the largest stream window, and the connection's opened to match
            c.frame(RawH2Client.SETTINGS, 0, 0, new byte[] {0, 4, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff})
                    .frame(WINDOW_UPDATE, 0, 0, int32(Integer.MAX_VALUE - 65_535));
            byte[] prefix = {0, (byte) (BIG >>> 24), (byte) (BIG >>> 16), (byte) (BIG >>> 8), (byte) BIG};
            c.headers(1, RawH2Client.request("Echo"), false).frame(RawH2Client.DATA, 1, 0, prefix).flush();

            long[] window = {65_535 - prefix.length};
            List<RawH2Client.Frame> granted = c.framesUntil(f -> {
                if (f.type() == WINDOW_UPDATE && f.streamId() == 1) {
                    window[0] += int32(f.payload());
                }
                return window[0] >= BIG;
            });
            assertTrue(window[0] >= BIG, "the stream window took the message before anything more was sent: " + window[0]
                    + " bytes; frames " + granted.size());

            byte[] body = Bytes.pattern(BIG, 7);
            for (int off = 0; off < BIG; off += MAX_FRAME) {
                int end = Math.min(off + MAX_FRAME, BIG);
                c.frame(RawH2Client.DATA, 1, end == BIG ? END_STREAM : 0, Arrays.copyOfRange(body, off, end));
            }
            c.flush();

            ByteArrayOutputStream echoed = new ByteArrayOutputStream();
            List<RawH2Client.Frame> answer = c.framesUntil(f -> f.streamId() == 1 && f.type() == RawH2Client.HEADERS
                    && (f.flags() & END_STREAM) != 0);
            for (RawH2Client.Frame f : answer) {
                if (f.type() == RawH2Client.DATA && f.streamId() == 1) {
                    echoed.writeBytes(f.payload());
                }
            }
            byte[] expected = new byte[prefix.length + BIG];
            System.arraycopy(prefix, 0, expected, 0, prefix.length);
            System.arraycopy(body, 0, expected, prefix.length, BIG);
            assertArrayEquals(expected, echoed.toByteArray(), "the echo of the whole message");
        } finally {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
        LoopbackTest.assertSlabsBackToBaseline(baseline);
    }

    private static byte[] int32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    private static int int32(byte[] b) {
        return ((b[0] & 0x7f) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }
}
