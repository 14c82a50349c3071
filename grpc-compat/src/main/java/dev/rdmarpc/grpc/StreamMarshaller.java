package dev.rdmarpc.grpc;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.buffer.SlabBuffer;
import io.grpc.Drainable;
import io.grpc.KnownLength;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * rdmarpc's marshaller for grpc's serialized messages: a grpc message is an {@link InputStream}
 * (protobuf's is {@link KnownLength} and {@link Drainable}); it is drained straight into the slab
 * segment the message frame is built in, and read back as a byte stream of known length.
 */
final class StreamMarshaller implements Marshaller<InputStream> {
    static final StreamMarshaller INSTANCE = new StreamMarshaller();

    private StreamMarshaller() {
    }

    /**
     * The message as a stream whose {@code available()} is its exact length: known-length streams as
     * they are, any other stream read into memory first.
     */
    static InputStream withKnownLength(InputStream message) throws IOException {
        if (message instanceof KnownLength || message instanceof ByteArrayInputStream) {
            return message;
        }
        return new Bytes(message.readAllBytes());
    }

    @Override
    public int serializedSize(InputStream value) {
        try {
            return value.available();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot size a grpc message", e);
        }
    }

    /**
     * Writes the message into the slab segment. Our own byte streams are copied straight from their array; other
     * streams of up to {@link SendScratch#MAX_BYTES} are read whole into the thread's scratch array and copied from
     * there (grpc's protobuf stream then encodes into that array directly, with no buffer of its own); larger ones,
     * and every stream on a virtual thread, are drained into the segment.
     */
    @Override
    public void write(InputStream value, MemorySegment target) {
        long size = target.byteSize();
        if (value instanceof Bytes b) {
            b.copyTo(target);
            return;
        }
        if (value instanceof Compressed c) {
            c.copyTo(target);
            return;
        }
        byte[] scratch = SendScratch.forSize((int) size);
        try {
            if (scratch != null) {
                int n = value.readNBytes(scratch, 0, (int) size);
                if (n != size || value.read() != -1) {
                    throw new IllegalStateException("grpc message stream gave " + (n < size ? n : "more than " + n)
                            + " bytes, " + size + " were announced");
                }
                MemorySegment.copy(scratch, 0, target, ValueLayout.JAVA_BYTE, 0, n);
                return;
            }
            drain(value, target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serialize a grpc message", e);
        }
    }

    private static void drain(InputStream value, MemorySegment target) throws IOException {
        ByteBuffer buf = target.asByteBuffer();
        try (SegmentOutputStream out = new SegmentOutputStream(buf)) {
            if (value instanceof Drainable d) {
                d.drainTo(out);
            } else {
                value.transferTo(out);
            }
        }
        if (buf.hasRemaining()) {
            throw new IllegalStateException("grpc message stream gave " + buf.position() + " bytes, "
                    + buf.limit() + " were announced");
        }
    }

    /** A message the stream compressed: it travels with rdmarpc's COMPRESSED flag. */
    @Override
    public boolean isCompressed(InputStream value) {
        return value instanceof Compressed;
    }

    /**
     * Copies the message out of the slab (which core frees when this returns) into a byte stream
     * of known length, which grpc's protobuf marshaller reads in one go.
     */
    @Override
    public InputStream parse(MemorySegment source) {
        return new Bytes(source.toArray(ValueLayout.JAVA_BYTE));
    }

    @Override
    public InputStream parse(MemorySegment segment, long offset, int length) {
        byte[] bytes = new byte[length];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        return new Bytes(bytes);
    }

    /**
     * A message that arrived with the COMPRESSED flag stays compressed here: the stream it belongs
     * to decompresses it with the decompressor grpc picked for that call.
     */
    @Override
    public InputStream parse(MemorySegment segment, long offset, int length, boolean compressed) {
        if (!compressed) {
            return parse(segment, offset, length);
        }
        byte[] bytes = new byte[length];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        return new Compressed(bytes);
    }

    /**
     * Takes a received message without copying it: grpc gets a stream over the slab, which it closes (releasing the
     * slab) once it has parsed or dropped the message. A compressed message is copied out, since the call's
     * decompressor reads it as a byte stream of its own.
     */
    @Override
    public InputStream parseOwned(SlabBuffer message, boolean compressed) {
        if (!compressed) {
            return new SlabMessageStream(message);
        }
        try {
            return parse(message.segment(), 0, message.length(), true);
        } finally {
            message.release();
        }
    }

    /** A received message: a byte stream of known length. */
    static final class Bytes extends ByteArrayInputStream implements KnownLength {
        Bytes(byte[] bytes) {
            super(bytes);
        }

        /** Copies the unread bytes into {@code target}, which must be exactly that long; they count as read. */
        void copyTo(MemorySegment target) {
            copyUnread(buf, pos, count, target);
            pos = count;
        }
    }

    /** A compressed message, sent or received: the bytes as they travel, of known length. */
    static final class Compressed extends ByteArrayInputStream implements KnownLength {
        Compressed(byte[] bytes) {
            super(bytes);
        }

        /** Copies the unread bytes into {@code target}, which must be exactly that long; they count as read. */
        void copyTo(MemorySegment target) {
            copyUnread(buf, pos, count, target);
            pos = count;
        }
    }

    private static void copyUnread(byte[] buf, int pos, int count, MemorySegment target) {
        int n = count - pos;
        if (n != target.byteSize()) {
            throw new IllegalStateException("grpc message stream gave " + n + " bytes, " + target.byteSize()
                    + " were announced");
        }
        MemorySegment.copy(buf, pos, target, ValueLayout.JAVA_BYTE, 0, n);
    }

    /** Writes into a fixed-size buffer over a slab segment; writing past its end is an error. */
    private static final class SegmentOutputStream extends OutputStream {
        private final ByteBuffer buf;

        SegmentOutputStream(ByteBuffer buf) {
            this.buf = buf;
        }

        @Override
        public void write(int b) throws IOException {
            if (!buf.hasRemaining()) {
                throw new IOException("grpc message stream wrote more than the " + buf.limit() + " bytes it announced");
            }
            buf.put((byte) b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (len > buf.remaining()) {
                throw new IOException("grpc message stream wrote more than the " + buf.limit() + " bytes it announced");
            }
            buf.put(b, off, len);
        }
    }
}
