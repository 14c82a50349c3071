package dev.rdmarpc.grpc;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A sent grpc message lands in its slab byte for byte, by whichever path it takes (scratch array, own array, drain). */
class StreamMarshallerWriteTest {

    private static byte[] content(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private static byte[] written(InputStream message, int size) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = arena.allocate(size);
            StreamMarshaller.INSTANCE.write(message, target);
            return target.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /** Known length and drainable, as grpc's protobuf stream is; records which way it was read. */
    private static final class ProtoLike extends InputStream implements KnownLength, Drainable {
        private final ByteArrayInputStream bytes;
        boolean drained;

        ProtoLike(byte[] content) {
            this.bytes = new ByteArrayInputStream(content);
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            drained = true;
            int n = bytes.available();
            bytes.transferTo(target);
            return n;
        }

        @Override
        public int read() {
            return bytes.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return bytes.read(b, off, len);
        }

        @Override
        public int available() {
            return bytes.available();
        }
    }

    @Test
    void aSmallMessageIsReadWholeThroughTheScratchArray() {
        for (int size : new int[] {0, 1, 64, 4096, SendScratch.MAX_BYTES}) {
            byte[] c = content(size);
            ProtoLike m = new ProtoLike(c);
            assertArrayEquals(c, written(m, size), "size " + size);
            assertFalse(m.drained, "read into the scratch array, not drained: size " + size);
        }
    }

    @Test
    void aLargeMessageIsDrainedIntoTheSegment() {
        int size = SendScratch.MAX_BYTES + 1;
        byte[] c = content(size);
        ProtoLike m = new ProtoLike(c);
        assertArrayEquals(c, written(m, size));
        assertTrue(m.drained);
    }

    @Test
    void onAVirtualThreadMessagesAreDrainedWithoutAScratchArray() throws Exception {
        byte[] c = content(4096);
        AtomicReference<byte[]> out = new AtomicReference<>();
        AtomicReference<ProtoLike> message = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            assertNull(SendScratch.forSize(4096));
            ProtoLike m = new ProtoLike(c);
            message.set(m);
            out.set(written(m, c.length));
        });
        t.join();
        assertArrayEquals(c, out.get());
        assertTrue(message.get().drained);
    }

    @Test
    void theBridgesOwnByteStreamsAreCopiedFromTheirArray() throws Exception {
        byte[] c = content(5000);
        StreamMarshaller.Bytes b = new StreamMarshaller.Bytes(c);
        assertArrayEquals(c, written(b, c.length));
        assertEquals(-1, b.read(), "the bytes count as read");
        byte[] z = content(300);
        assertArrayEquals(z, written(new StreamMarshaller.Compressed(z), z.length));
    }

    @Test
    void aStreamGivingOtherThanTheAnnouncedBytesIsAnError() {
        byte[] c = content(100);
        assertThrows(IllegalStateException.class, () -> written(new ProtoLike(c), 101), "fewer bytes than announced");
        assertThrows(IllegalStateException.class, () -> written(new ProtoLike(c), 99), "more bytes than announced");
        assertThrows(IllegalStateException.class, () -> written(new StreamMarshaller.Bytes(c), 99));
        int large = SendScratch.MAX_BYTES + 10;
        assertThrows(IllegalStateException.class, () -> written(new ProtoLike(content(large - 1)), large),
                "fewer bytes than announced, drained");
    }
}
