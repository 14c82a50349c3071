package dev.rdmarpc.core;

import dev.rdmarpc.core.buffer.SlabBuffer;

import java.lang.foreign.MemorySegment;

/**
 * Turns messages into bytes written straight into an off-heap slab segment, and back, with no
 * intermediate {@code byte[]}.
 */
public interface Marshaller<T> {

    /** The exact number of bytes {@link #write} will produce for the value. */
    int serializedSize(T value);

    /** Writes the value into the target, whose size is exactly {@link #serializedSize(Object)}. */
    void write(T value, MemorySegment target);

    /**
     * Parses a value from the source. The source is only valid during this call: the result must
     * not alias it.
     *
     * @throws RuntimeException if the bytes are not a valid message; the call then fails with INTERNAL
     */
    T parse(MemorySegment source);

    /**
     * Writes the value into {@code length} bytes of {@code segment} at {@code offset}: the same as {@link #write}
     * on that slice. Marshallers may override it to skip making the slice.
     */
    default void write(T value, MemorySegment segment, long offset, int length) {
        write(value, segment.asSlice(offset, length));
    }

    /**
     * Parses a value from {@code length} bytes of {@code segment} at {@code offset}: the same as {@link #parse} of
     * that slice. Marshallers may override it to skip making the slice.
     */
    default T parse(MemorySegment segment, long offset, int length) {
        return parse(segment.asSlice(offset, length));
    }

    /**
     * Whether the bytes {@link #write} produces for this value are compressed (the MESSAGE frame then carries the
     * COMPRESSED flag, and the encoding is agreed in the call's metadata). Plain marshallers never compress.
     */
    default boolean isCompressed(T value) {
        return false;
    }

    /**
     * Whether this marshaller parses plain bytes only, so that a message that arrived gzip-compressed on a call that
     * negotiated gzip ({@code grpc-encoding}, see {@link CallOptions#withCompression}) is inflated before it is parsed
     * ({@code ProtoMarshaller} does). The default, false, hands such a message to
     * {@link #parse(MemorySegment, long, int, boolean)} as it came, with the flag: for marshallers that decode
     * compressed bytes themselves.
     */
    default boolean parsesDecompressed() {
        return false;
    }

    /**
     * Parses a message that arrived with the COMPRESSED flag set or not. The default takes uncompressed messages
     * only: a compressed one fails the call with UNIMPLEMENTED, as gRPC answers a message in an encoding the receiver
     * does not support; marshallers that agree on an encoding override this.
     */
    default T parse(MemorySegment segment, long offset, int length, boolean compressed) {
        if (compressed) {
            throw Status.UNIMPLEMENTED.withDescription("received a compressed message, but this method's marshaller "
                    + "does not decompress: send it uncompressed").asException();
        }
        return parse(segment, offset, length);
    }

    /**
     * Parses one whole received message held in {@code message} (its content is {@code [0, length())}), taking
     * ownership of the buffer. The default parses with {@link #parse(MemorySegment, long, int, boolean)} and
     * releases the buffer. A marshaller that hands the bytes on without copying them (a stream over the buffer)
     * keeps it and releases it once they are consumed; it must release it on every path, failures included.
     */
    default T parseOwned(SlabBuffer message, boolean compressed) {
        try {
            return parse(message.segment(), 0, message.length(), compressed);
        } finally {
            message.release();
        }
    }
}
