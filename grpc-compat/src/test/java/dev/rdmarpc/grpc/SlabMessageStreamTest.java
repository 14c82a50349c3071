package dev.rdmarpc.grpc;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import io.grpc.KnownLength;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** A received message reaches grpc as a stream over its slab, and the slab goes back when grpc closes it. */
class SlabMessageStreamTest {
    private final SlabPool pool = new SlabPool(0, true);

    private SlabBuffer message(byte[] content) {
        SlabBuffer b = pool.allocate(content.length);
        MemorySegment.copy(content, 0, b.segment(), ValueLayout.JAVA_BYTE, 0, content.length);
        return b.setLength(content.length);
    }

    @Test
    void anUncompressedMessageIsReadFromTheSlabAndFreedOnClose() throws Exception {
        byte[] content = new byte[10_000];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 7);
        }
        InputStream in = StreamMarshaller.INSTANCE.parseOwned(message(content), false);
        assertInstanceOf(SlabMessageStream.class, in, "no copy out of the slab");
        assertInstanceOf(KnownLength.class, in, "grpc's protobuf marshaller reads a known-length stream in one go");
        assertEquals(10_000, in.available());
        assertEquals(1, pool.inUseBuffers(), "the stream holds the slab until grpc is done with it");
        byte[] first = new byte[3];
        assertEquals(3, in.read(first));
        assertEquals(content[0], first[0]);
        assertEquals(content[3] & 0xff, in.read());
        assertEquals(10, in.skip(10));
        byte[] rest = in.readAllBytes();
        assertEquals(content.length - 14, rest.length);
        assertEquals(content[14], rest[0]);
        assertEquals(-1, in.read());
        in.close();
        in.close();
        assertEquals(0, pool.inUseBuffers(), "closed once, released once");
        assertEquals(0, in.available());
    }

    @Test
    void aCompressedMessageIsCopiedOutAndItsSlabFreedAtOnce() throws Exception {
        InputStream in = StreamMarshaller.INSTANCE.parseOwned(message(new byte[] {1, 2, 3}), true);
        assertInstanceOf(StreamMarshaller.Compressed.class, in);
        assertEquals(0, pool.inUseBuffers());
        assertArrayEquals(new byte[] {1, 2, 3}, in.readAllBytes());
    }

    @Test
    void aMessageDroppedUnreadIsFreedWhenClosed() throws Exception {
        InputStream in = StreamMarshaller.INSTANCE.parseOwned(message(new byte[64]), false);
        in.close();
        assertEquals(0, pool.inUseBuffers());
    }
}
