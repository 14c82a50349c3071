package dev.rdmarpc.core.internal.call;

/**
 * Ended stream objects kept for the next calls of one channel or one server connection, so that a call in steady
 * state allocates none. A stream is given back only by itself, once, at the point after which nothing else holds it
 * (see {@link ClientStream} and {@link ServerStream} for when that is), with every field already cleared. Bounded:
 * past {@link #CAPACITY} streams, a given-back one is left to the garbage collector. Thread-safe.
 */
public final class RecycledStreams<T> {
    /** Streams kept at most. */
    static final int CAPACITY = 64;

    private final Object[] idle = new Object[CAPACITY];
    private int count;

    /** A kept stream, or null when there is none. */
    @SuppressWarnings("unchecked")
    public synchronized T take() {
        if (count == 0) {
            return null;
        }
        T s = (T) idle[--count];
        idle[count] = null;
        return s;
    }

    /** Keeps an ended stream for a later call (ignored when full). */
    synchronized void give(T stream) {
        for (int i = 0; i < count; i++) {
            if (idle[i] == stream) {
                throw new IllegalStateException("stream given back twice: " + stream);
            }
        }
        if (count < CAPACITY) {
            idle[count++] = stream;
        }
    }

    /** Streams waiting for a call (for tests). */
    synchronized int idle() {
        return count;
    }
}
