package dev.rdmarpc.core.protobuf;

import com.google.protobuf.MessageLite;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;

import java.lang.foreign.MemorySegment;

/**
 * A protobuf marshaller whose large received messages are parsed into an array lent to them, handed over as
 * {@link LentMessage}s that the receiver releases: the message's {@code bytes} fields are views of that array, and on
 * release it is reused for a later message. {@link ProtoMarshaller} gives each large message a fresh array, which the
 * JVM zeroes before the message's bytes are copied in; a lent array is not zeroed again, which is the saving. Messages
 * up to 4 KiB are parsed as {@code ProtoMarshaller} parses them and lend nothing.
 * <p>
 * Use it on the side that receives: a server's method definition for lent requests, a client's for lent responses
 * (the other side's method keeps {@code ProtoMarshaller}: the bytes on the wire are the same). Messages to send are
 * wrapped with {@link LentMessage#of}; sending copies a message into the call's own buffer, so a lent message built
 * into a response can be released as soon as the call that sends it has returned.
 *
 * @param <T> the protobuf message type
 */
public final class LendingMarshaller<T extends MessageLite> implements Marshaller<LentMessage<T>> {
    /** Largest message parsed without a lent array. */
    static final int MAX_UNLENT = ProtoMarshaller.SCRATCH_SIZE;

    private final ProtoMarshaller<T> copying;
    private final LentArrays arrays;

    LendingMarshaller(T defaultInstance, LentArrays arrays) {
        this.copying = ProtoMarshaller.of(defaultInstance);
        this.arrays = arrays;
    }

    /** The lending marshaller for the message type of this default instance. */
    public static <T extends MessageLite> LendingMarshaller<T> of(T defaultInstance) {
        return new LendingMarshaller<>(defaultInstance, LentArrays.shared());
    }

    /**
     * {@code method} (a generated one: its marshallers are {@link ProtoMarshaller}s) with its requests lent, for a
     * server's method definition; same name and type, so clients keep the generated method.
     *
     * @throws IllegalArgumentException if the request marshaller is not a {@code ProtoMarshaller}
     */
    public static <Q extends MessageLite, R> MethodDescriptor<LentMessage<Q>, R> lendingRequests(MethodDescriptor<Q, R> method) {
        return MethodDescriptor.create(method.getFullMethodName(), method.getType(),
                of(prototype(method.getRequestMarshaller(), method, "request")), method.getResponseMarshaller());
    }

    /**
     * {@code method} (a generated one) with its responses lent, for a client's calls; same name and type, so the
     * server keeps the generated method.
     *
     * @throws IllegalArgumentException if the response marshaller is not a {@code ProtoMarshaller}
     */
    public static <Q, R extends MessageLite> MethodDescriptor<Q, LentMessage<R>> lendingResponses(MethodDescriptor<Q, R> method) {
        return MethodDescriptor.create(method.getFullMethodName(), method.getType(), method.getRequestMarshaller(),
                of(prototype(method.getResponseMarshaller(), method, "response")));
    }

    private static <M extends MessageLite> M prototype(Marshaller<M> marshaller, MethodDescriptor<?, ?> method, String side) {
        if (marshaller instanceof ProtoMarshaller<M> proto) {
            return proto.getDefaultInstance();
        }
        throw new IllegalArgumentException(method.getFullMethodName() + "'s " + side + " marshaller is not a ProtoMarshaller: "
                + marshaller);
    }

    @Override
    public int serializedSize(LentMessage<T> value) {
        return copying.serializedSize(value.message());
    }

    @Override
    public void write(LentMessage<T> value, MemorySegment target) {
        copying.write(value.message(), target);
    }

    @Override
    public void write(LentMessage<T> value, MemorySegment segment, long offset, int size) {
        copying.write(value.message(), segment, offset, size);
    }

    @Override
    public LentMessage<T> parse(MemorySegment source) {
        long size = source.byteSize();
        if (size > Integer.MAX_VALUE) {
            throw Status.RESOURCE_EXHAUSTED.withDescription("message of " + size + " bytes").asException();
        }
        return parse(source, 0, (int) size);
    }

    @Override
    public LentMessage<T> parse(MemorySegment segment, long offset, int size) {
        if (size <= MAX_UNLENT) {
            return LentMessage.of(copying.parse(segment, offset, size));
        }
        byte[] array = arrays.take(size);
        boolean lent = false;
        try {
            T value = copying.parseAliasing(array, segment, offset, size);
            lent = true;
            return new LentMessage<>(value, array, arrays);
        } finally {
            if (!lent) {
                arrays.give(array);
            }
        }
    }

    /** Parses plain bytes only: a gzip-compressed message is inflated first (see {@link Marshaller#parsesDecompressed}). */
    @Override
    public boolean parsesDecompressed() {
        return true;
    }
}
