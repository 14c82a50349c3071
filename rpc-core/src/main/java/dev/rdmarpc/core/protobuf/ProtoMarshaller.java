package dev.rdmarpc.core.protobuf;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.Status;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Writes protobuf messages into a slab segment (small ones through a reused per-thread encoder, large ones through a
 * {@link CodedOutputStream} over the segment's direct {@link ByteBuffer}) and parses them from one (small ones from a
 * per-thread copy, large ones from one copy that their {@code bytes} fields then share).
 * <p>
 * {@code T} is a protobuf message ({@link #of} takes only those); the class leaves the type unbounded so that its
 * methods need no generic bridge methods: each would be one more call level on every message written or parsed, where
 * the JIT's inlining depth is short (PERFORMANCE.md, "Inlining depth").
 */
public final class ProtoMarshaller<T> implements Marshaller<T> {
    private final Parser<T> parser;
    private final T defaultInstance;

    private ProtoMarshaller(T defaultInstance, Parser<T> parser) {
        this.defaultInstance = defaultInstance;
        this.parser = parser;
    }

    /** The marshaller for the message type of this default instance. */
    public static <T extends MessageLite> ProtoMarshaller<T> of(T defaultInstance) {
        @SuppressWarnings("unchecked")
        Parser<T> parser = (Parser<T>) defaultInstance.getParserForType();
        return new ProtoMarshaller<>(defaultInstance, parser);
    }

    public T getDefaultInstance() {
        return defaultInstance;
    }

    @Override
    public int serializedSize(T value) {
        return ((MessageLite) value).getSerializedSize();
    }

    /** Messages up to this size are written through a per-thread encoder; larger ones by an encoder over the slab. */
    static final int SMALL_WRITE = 4096;
    private static final ThreadLocal<SmallWriter> SMALL_WRITER = ThreadLocal.withInitial(SmallWriter::new);

    @Override
    public void write(T value, MemorySegment target) {
        long size = target.byteSize();
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("target of " + size + " bytes is larger than a message can be");
        }
        write(value, target, 0, (int) size);
    }

    @Override
    public void write(T value, MemorySegment segment, long offset, int size) {
        if (size == 0) {
            return;
        }
        if (size <= SMALL_WRITE) {
            SmallWriter w = SMALL_WRITER.get();
            if (!w.busy) {
                w.write((MessageLite) value, segment, offset, size);
                return;
            }
        }
        ByteBuffer bb = segment.asSlice(offset, size).asByteBuffer();
        CodedOutputStream out = CodedOutputStream.newInstance(bb);
        try {
            ((MessageLite) value).writeTo(out);
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException("protobuf serialization into a slab failed", e);
        }
        if (bb.position() != size) {
            throw changed(bb.position(), size);
        }
    }

    private static IllegalStateException changed(long wrote, long size) {
        return new IllegalStateException("message changed while being serialized: wrote " + wrote + " of " + size
                + " bytes");
    }

    /**
     * One thread's encoder for small messages, reused from message to message: protobuf's stream encoder fills its
     * buffer and, on flush, copies it into the target segment. Nothing is allocated per message.
     */
    private static final class SmallWriter extends java.io.OutputStream {
        private final CodedOutputStream out = CodedOutputStream.newInstance(this, SMALL_WRITE);
        private MemorySegment target;
        private long position;
        private long limit;
        /** Set while writing, so that a nested write on this thread takes the other path. */
        private boolean busy;
        /**
         * The array the encoder flushed last (its own buffer, every time but for a large bytes field) and a segment
         * over it: copies go segment to segment, which is shallower for the JIT than an array copy into a segment
         * (PERFORMANCE.md, "Inlining depth"). Only arrays up to {@link #SMALL_WRITE} bytes are kept.
         */
        private byte[] lastArray;
        private MemorySegment lastArraySegment;

        void write(MessageLite value, MemorySegment into, long offset, int size) {
            busy = true;
            target = into;
            position = offset;
            limit = offset + size;
            boolean done = false;
            try {
                value.writeTo(out);
                out.flush();
                done = true;
            } catch (IOException | IndexOutOfBoundsException e) {
                throw new IllegalStateException("protobuf serialization into a slab failed: " + e.getMessage(), e);
            } finally {
                target = null;
                busy = false;
                if (!done) {
                    // the encoder may still hold bytes of the failed message: start the next one afresh
                    SMALL_WRITER.remove();
                }
            }
            if (position != offset + size) {
                throw changed(position - offset, size);
            }
        }

        @Override
        public void write(int b) {
            if (position >= limit) {
                throw new IndexOutOfBoundsException("more bytes than the message's size");
            }
            target.set(java.lang.foreign.ValueLayout.JAVA_BYTE, position, (byte) b);
            position++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (position + len > limit) {
                throw new IndexOutOfBoundsException("more bytes than the message's size");
            }
            MemorySegment source = lastArraySegment;
            if (b != lastArray) {
                source = MemorySegment.ofArray(b);
                if (b.length <= SMALL_WRITE) {
                    lastArray = b;
                    lastArraySegment = source;
                }
            }
            MemorySegment.copy(source, off, target, position, len);
            position += len;
        }
    }

    /** Messages up to this size are parsed from a per-thread copy; larger ones from a copy their bytes fields share. */
    static final int SCRATCH_SIZE = 4 * 1024;
    /** A per-thread array for parsing small messages and a segment over it (copied into segment to segment). */
    private record Scratch(byte[] array, MemorySegment segment) {
        Scratch(byte[] array) {
            this(array, MemorySegment.ofArray(array));
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(() -> new Scratch(new byte[SCRATCH_SIZE]));

    /** Parses plain bytes only: a gzip-compressed message is inflated first (see {@link Marshaller#parsesDecompressed}). */
    @Override
    public boolean parsesDecompressed() {
        return true;
    }

    @Override
    public T parse(MemorySegment source) {
        long size = source.byteSize();
        if (size > Integer.MAX_VALUE) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("message of " + size + " bytes").asException();
        }
        return parse(source, 0, (int) size);
    }

    @Override
    public T parse(MemorySegment segment, long offset, int size) {
        if (size == 0) {
            return defaultInstance;
        }
        if (size > SCRATCH_SIZE) {
            return parseAliasing(new byte[size], segment, offset, size);
        }
        try {
            // protobuf copies bytes fields out of the array (no aliasing), so the scratch can be reused
            Scratch scratch = SCRATCH.get();
            MemorySegment.copy(segment, offset, scratch.segment(), 0, size);
            CodedInputStream in = CodedInputStream.newInstance(scratch.array(), 0, size);
            in.setSizeLimit(Integer.MAX_VALUE);
            T value = parser.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
            in.checkLastTagWas(0);
            return value;
        } catch (InvalidProtocolBufferException e) {
            throw invalid(e);
        }
    }

    /**
     * Parses the {@code size} bytes at {@code offset} from one copy into {@code array} (at least {@code size} long),
     * which the parsed message keeps: its bytes fields alias it instead of copying again (protobuf's stream decoder
     * would copy each large bytes field twice). Nothing else may change the array while the message is in use.
     */
    T parseAliasing(byte[] array, MemorySegment segment, long offset, int size) {
        try {
            MemorySegment.copy(segment, java.lang.foreign.ValueLayout.JAVA_BYTE, offset, array, 0, size);
            // (wrapped as immutable: protobuf aliases only buffers it is told nobody else will change)
            CodedInputStream in = com.google.protobuf.UnsafeByteOperations.unsafeWrap(array, 0, size).newCodedInput();
            in.enableAliasing(true);
            in.setSizeLimit(Integer.MAX_VALUE);
            T value = parser.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
            in.checkLastTagWas(0);
            return value;
        } catch (InvalidProtocolBufferException e) {
            throw invalid(e);
        }
    }

    private static RuntimeException invalid(InvalidProtocolBufferException e) {
        return Status.INTERNAL.withDescription("invalid protobuf message: " + e.getMessage()).withCause(e).asException();
    }
}
