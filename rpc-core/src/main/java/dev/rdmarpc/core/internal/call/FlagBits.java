package dev.rdmarpc.core.internal.call;

/**
 * A stream's yes/no state kept as the bits of one {@code short} field instead of a boolean field each (a smaller
 * object per call); the stream reads and writes the bits under its own lock only, so no update is lost.
 */
interface FlagBits {
    /** The bits, read with the lock held. */
    short flagBits();

    /** Sets the bits, with the lock held. */
    void flagBits(short bits);

    default boolean has(int flag) {
        return (flagBits() & flag) != 0;
    }

    default void set(int flag) {
        flagBits((short) (flagBits() | flag));
    }

    default void clear(int flag) {
        flagBits((short) (flagBits() & ~flag));
    }

    default void set(int flag, boolean on) {
        if (on) {
            set(flag);
        } else {
            clear(flag);
        }
    }
}
