package dev.rdmarpc.core.protobuf;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A received protobuf message whose {@code bytes} fields are views of an array lent to it ({@link LendingMarshaller}),
 * not copies of their own. Whoever receives a lent message releases it once nothing reads the message or anything taken
 * from it any more (its {@code ByteString}s, a message built on them): the array then goes back to be reused for
 * another message without being zeroed, and those views would read that message's bytes. Keep a copy
 * ({@code ByteString.copyFrom(bytes.toByteArray())}) of what must outlive the release. A message that is never released
 * costs only its reuse: the garbage collector takes the array as any other. Also {@link AutoCloseable}, for
 * try-with-resources.
 *
 * @param <T> the protobuf message type
 */
public final class LentMessage<T> implements AutoCloseable {
    private final T message;
    /** The array the message reads, or null when it borrowed none. */
    private final byte[] array;
    private final LentArrays pool;
    private final AtomicBoolean released = new AtomicBoolean();

    LentMessage(T message, byte[] array, LentArrays pool) {
        this.message = message;
        this.array = array;
        this.pool = pool;
    }

    /** A message that borrows nothing: one to send through a method whose marshaller is a {@link LendingMarshaller}. */
    public static <T> LentMessage<T> of(T message) {
        return new LentMessage<>(java.util.Objects.requireNonNull(message, "message"), null, null);
    }

    /**
     * The message, valid until {@link #release()}.
     *
     * @throws IllegalStateException once released
     */
    public T message() {
        if (released.get()) {
            throw new IllegalStateException("the lent message was released");
        }
        return message;
    }

    /** Whether the message reads a lent array (it was large enough to be parsed into one). */
    public boolean isLent() {
        return array != null;
    }

    /** Gives the array back for reuse; idempotent. */
    public void release() {
        if (released.compareAndSet(false, true) && array != null) {
            pool.give(array);
        }
    }

    /** Whether {@link #release()} has been called. */
    public boolean isReleased() {
        return released.get();
    }

    /** The same as {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "LentMessage{" + message.getClass().getSimpleName() + (array != null ? ", lent " + array.length + " bytes" : "")
                + (released.get() ? ", released" : "") + "}";
    }
}
