package dev.rdmarpc.transport.rdma;

import java.util.ArrayList;
import java.util.List;

/**
 * An int-keyed map for the poller's lookups (queue pair number or endpoint id → endpoint): reads are lock-free on an
 * immutable open-addressing table and never box; writes (connection setup and teardown) copy the table.
 */
final class IntMap<V> {
    private static final class Table {
        final int[] keys;
        final Object[] values;
        final int mask;
        final int size;

        Table(int capacity, int size) {
            this.keys = new int[capacity];
            this.values = new Object[capacity];
            this.mask = capacity - 1;
            this.size = size;
        }
    }

    private volatile Table table = new Table(16, 0);

    /** The value for {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(int key) {
        Table t = table;
        int i = mix(key) & t.mask;
        while (true) {
            Object v = t.values[i];
            if (v == null) {
                return null;
            }
            if (t.keys[i] == key) {
                return (V) v;
            }
            i = (i + 1) & t.mask;
        }
    }

    synchronized void put(int key, V value) {
        List<Object[]> entries = entries(key);
        entries.add(new Object[]{key, value});
        table = build(entries);
    }

    synchronized void remove(int key, V value) {
        if (get(key) != value) {
            return;
        }
        table = build(entries(key));
    }

    /** A copy of the values. */
    @SuppressWarnings("unchecked")
    List<V> values() {
        Table t = table;
        List<V> out = new ArrayList<>(t.size);
        for (Object v : t.values) {
            if (v != null) {
                out.add((V) v);
            }
        }
        return out;
    }

    int size() {
        return table.size;
    }

    private List<Object[]> entries(int except) {
        Table t = table;
        List<Object[]> entries = new ArrayList<>(t.size + 1);
        for (int i = 0; i < t.values.length; i++) {
            if (t.values[i] != null && t.keys[i] != except) {
                entries.add(new Object[]{t.keys[i], t.values[i]});
            }
        }
        return entries;
    }

    private static Table build(List<Object[]> entries) {
        int capacity = 16;
        while (capacity < entries.size() * 3) {
            capacity <<= 1;
        }
        Table t = new Table(capacity, entries.size());
        for (Object[] e : entries) {
            int key = (Integer) e[0];
            int i = mix(key) & t.mask;
            while (t.values[i] != null) {
                i = (i + 1) & t.mask;
            }
            t.keys[i] = key;
            t.values[i] = e[1];
        }
        return t;
    }

    private static int mix(int key) {
        int h = key * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
