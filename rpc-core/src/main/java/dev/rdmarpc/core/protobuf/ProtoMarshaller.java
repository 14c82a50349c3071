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
 * Writes protobuf messages straight into a slab segment through a {@link CodedOutputStream} over
 * the segment's direct {@link ByteBuffer}, and parses them straight from one.
 */
public final class ProtoMarshaller<T extends MessageLite> implements Marshaller<T> {
    private final Parser<T> parser;
    private final T defaultInstance;

    private ProtoMarshaller(T defaultInstance) {
        this.defaultInstance = defaultInstance;
        @SuppressWarnings("unchecked")
        Parser<T> p = (Parser<T>) defaultInstance.getParserForType();
        this.parser = p;
    }

    /** The marshaller for the message type of this default instance. */
    public static <T extends MessageLite> ProtoMarshaller<T> of(T defaultInstance) {
        return new ProtoMarshaller<>(defaultInstance);
    }

    public T getDefaultInstance() {
        return defaultInstance;
    }

    @Override
    public int serializedSize(T value) {
        return value.getSerializedSize();
    }

    @Override
    public void write(T value, MemorySegment target) {
        if (target.byteSize() == 0) {
            return;
        }
        ByteBuffer bb = target.asByteBuffer();
        CodedOutputStream out = CodedOutputStream.newInstance(bb);
        try {
            value.writeTo(out);
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException("protobuf serialization into a slab failed", e);
        }
        if (bb.position() != target.byteSize()) {
            throw new IllegalStateException("message changed while being serialized: wrote " + bb.position()
                    + " of " + target.byteSize() + " bytes");
        }
    }

    /** Messages up to this size are parsed from a per-thread copy; larger ones are streamed. */
    static final int SCRATCH_SIZE = 64 * 1024;
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[SCRATCH_SIZE]);

    @Override
    public T parse(MemorySegment source) {
        try {
            long size = source.byteSize();
            if (size == 0) {
                return defaultInstance;
            }
            CodedInputStream in;
            if (size <= SCRATCH_SIZE) {
                // protobuf copies bytes fields out of the array (no aliasing), so the scratch can be reused
                byte[] scratch = SCRATCH.get();
                MemorySegment.copy(source, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, scratch, 0, (int) size);
                in = CodedInputStream.newInstance(scratch, 0, (int) size);
            } else {
                // stream through a small buffer: no full-size copy of large messages
                in = CodedInputStream.newInstance(new SegmentInputStream(source), 64 * 1024);
            }
            in.setSizeLimit(Integer.MAX_VALUE);
            T value = parser.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
            in.checkLastTagWas(0);
            return value;
        } catch (InvalidProtocolBufferException e) {
            throw Status.INTERNAL.withDescription("invalid protobuf message: " + e.getMessage()).withCause(e).asException();
        }
    }
}
