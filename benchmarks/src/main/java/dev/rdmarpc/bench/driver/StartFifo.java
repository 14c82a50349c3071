package dev.rdmarpc.bench.driver;

/**
 * The start times of the calls in flight on an ordered channel (a stream or a raw connection),
 * oldest first, each with the lane it belongs to. Thread-safe; grows as needed.
 */
final class StartFifo {
    private long[] starts = new long[16];
    private Object[] owners = new Object[16];
    private int head;
    private int size;
    private Object polledOwner;

    synchronized void add(Object owner, long start) {
        if (size == starts.length) {
            grow();
        }
        int tail = (head + size) & (starts.length - 1);
        starts[tail] = start;
        owners[tail] = owner;
        size++;
    }

    /**
     * Removes the oldest entry and returns its start time; its owner is then {@link #polledOwner()}.
     *
     * @throws IllegalStateException when nothing is in flight (a response nobody asked for)
     */
    synchronized long poll() {
        if (size == 0) {
            throw new IllegalStateException("a response arrived with no request in flight");
        }
        long s = starts[head];
        polledOwner = owners[head];
        owners[head] = null;
        head = (head + 1) & (starts.length - 1);
        size--;
        return s;
    }

    /** The owner of the entry last removed by {@link #poll}; read it on the thread that polled. */
    synchronized Object polledOwner() {
        return polledOwner;
    }

    synchronized int size() {
        return size;
    }

    /** The oldest start time, or the current time when nothing is in flight. */
    synchronized long peekOrNow() {
        return size == 0 ? System.nanoTime() : starts[head];
    }

    private void grow() {
        int n = starts.length;
        long[] s = new long[n * 2];
        Object[] o = new Object[n * 2];
        for (int i = 0; i < size; i++) {
            s[i] = starts[(head + i) & (n - 1)];
            o[i] = owners[(head + i) & (n - 1)];
        }
        starts = s;
        owners = o;
        head = 0;
    }
}
