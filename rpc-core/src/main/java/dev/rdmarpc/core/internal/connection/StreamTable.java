package dev.rdmarpc.core.internal.connection;

import java.util.ArrayList;
import java.util.List;

/**
 * A connection's open streams by id: an open-addressing table keyed by the int id itself (no boxing, no node per
 * entry), linear probing with backward-shift deletion. Ids are positive; 0 marks a free slot. Every method locks the
 * table: lookups come from the connection's I/O thread, inserts and removals from callers' threads.
 */
public final class StreamTable<V> {
    private int[] keys;
    private Object[] values;
    private int size;

    public StreamTable() {
        keys = new int[16];
        values = new Object[16];
    }

    private static int slot(int key, int mask) {
        int h = key * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    /** The stream with this id, or null. */
    @SuppressWarnings("unchecked")
    public synchronized V get(int key) {
        int[] k = keys;
        int mask = k.length - 1;
        for (int i = slot(key, mask); k[i] != 0; i = (i + 1) & mask) {
            if (k[i] == key) {
                return (V) values[i];
            }
        }
        return null;
    }

    /** Adds or replaces the stream with this id. */
    public synchronized void put(int key, V value) {
        if (key <= 0) {
            throw new IllegalArgumentException("stream id must be positive: " + key);
        }
        if ((size + 1) * 2 > keys.length) {
            resize(keys.length * 2);
        }
        int[] k = keys;
        int mask = k.length - 1;
        int i = slot(key, mask);
        while (k[i] != 0) {
            if (k[i] == key) {
                values[i] = value;
                return;
            }
            i = (i + 1) & mask;
        }
        k[i] = key;
        values[i] = value;
        size++;
    }

    /** Removes the entry for this id if it maps to {@code value}; true if it did. */
    public synchronized boolean remove(int key, V value) {
        int[] k = keys;
        int mask = k.length - 1;
        for (int i = slot(key, mask); k[i] != 0; i = (i + 1) & mask) {
            if (k[i] == key) {
                if (values[i] != value) {
                    return false;
                }
                deleteAt(i);
                return true;
            }
        }
        return false;
    }

    /** Closes the gap at {@code i} by moving later entries of the probe run back. */
    private void deleteAt(int i) {
        int[] k = keys;
        Object[] v = values;
        int mask = k.length - 1;
        int gap = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (k[j] == 0) {
                break;
            }
            int home = slot(k[j], mask);
            // move k[j] into the gap unless its home lies cyclically in (gap, j]
            boolean homeBetween = gap <= j ? (home > gap && home <= j) : (home > gap || home <= j);
            if (!homeBetween) {
                k[gap] = k[j];
                v[gap] = v[j];
                gap = j;
            }
        }
        k[gap] = 0;
        v[gap] = null;
        size--;
    }

    private void resize(int capacity) {
        int[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new int[capacity];
        values = new Object[capacity];
        int mask = capacity - 1;
        for (int n = 0; n < oldKeys.length; n++) {
            if (oldKeys[n] != 0) {
                int i = slot(oldKeys[n], mask);
                while (keys[i] != 0) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[n];
                values[i] = oldValues[n];
            }
        }
    }

    public synchronized int size() {
        return size;
    }

    public synchronized boolean isEmpty() {
        return size == 0;
    }

    /** A copy of the streams now in the table. */
    @SuppressWarnings("unchecked")
    public synchronized List<V> snapshot() {
        List<V> out = new ArrayList<>(size);
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != 0) {
                out.add((V) values[i]);
            }
        }
        return out;
    }

    /** Empties the table and returns what it held. */
    public synchronized List<V> takeAll() {
        List<V> out = snapshot();
        keys = new int[16];
        values = new Object[16];
        size = 0;
        return out;
    }
}
