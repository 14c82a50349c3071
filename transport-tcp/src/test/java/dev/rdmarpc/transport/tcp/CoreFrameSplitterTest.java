package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.FrameType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Core's writes cut into frames: however core's bytes are divided between writes, the same frames come out. */
@ExtendWith(LeakCheck.class)
class CoreFrameSplitterTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private record Seen(int type, int flags, int streamId, int credit, byte[] payload) {
    }

    private static byte[] stream(List<byte[]> payloads) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int i = 0; i < payloads.size(); i++) {
            all.write(TestFrames.wire(FrameType.MESSAGE, i % 2, 2 * i + 1, i, payloads.get(i)));
        }
        return all.toByteArray();
    }

    private static ByteBuf direct(byte[] all, int from, int to) {
        return ALLOC.directBuffer(to - from).writeBytes(all, from, to - from);
    }

    private static List<Seen> split(byte[] all, int... cuts) {
        CoreFrameSplitter splitter = new CoreFrameSplitter(ALLOC);
        List<Seen> seen = new ArrayList<>();
        CoreFrameSplitter.Sink sink = (type, flags, streamId, credit, payload) ->
                seen.add(new Seen(type, flags, streamId, credit, ByteBufUtil.getBytes(payload)));
        int from = 0;
        for (int cut : cuts) {
            splitter.add(direct(all, from, cut), sink);
            from = cut;
        }
        splitter.add(direct(all, from, all.length), sink);
        splitter.release();
        return seen;
    }

    private static void assertFrames(List<byte[]> payloads, List<Seen> seen) {
        assertEquals(payloads.size(), seen.size());
        for (int i = 0; i < payloads.size(); i++) {
            Seen s = seen.get(i);
            assertEquals(FrameType.MESSAGE, s.type());
            assertEquals(i % 2, s.flags());
            assertEquals(2 * i + 1, s.streamId());
            assertEquals(i, s.credit());
            assertArrayEquals(payloads.get(i), s.payload());
        }
    }

    @Test
    void everyTwoAndThreeWayDivisionGivesTheSameFrames() throws Exception {
        List<byte[]> payloads = List.of(TestFrames.pattern(1, 1, 21), new byte[0], TestFrames.pattern(1, 2, 40));
        byte[] all = stream(payloads);
        for (int a = 0; a <= all.length; a++) {
            assertFrames(payloads, split(all, a));
            for (int b = a; b <= all.length; b += 7) {
                assertFrames(payloads, split(all, a, b));
            }
        }
    }

    @Test
    void manyWholeFramesInOneWrite() throws Exception {
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            payloads.add(TestFrames.pattern(2, i, i % 30));
        }
        assertFrames(payloads, split(stream(payloads)));
    }
}
