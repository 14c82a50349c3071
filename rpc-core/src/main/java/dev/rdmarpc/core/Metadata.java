package dev.rdmarpc.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Call headers or trailers: ordered key/value pairs; keys are lower-case ASCII, values are ASCII
 * strings, or raw bytes for keys ending in {@code -bin}. A key may appear several times.
 */
public final class Metadata {

    /** The suffix that marks a key's values as binary. */
    public static final String BINARY_SUFFIX = "-bin";

    /** A typed metadata key. */
    public static final class Key<T> {
        private final String name;
        private final boolean binary;

        private Key(String name, boolean binary) {
            this.name = name;
            this.binary = binary;
        }

        /** A key for ASCII string values; the name must not end in {@code -bin}. */
        public static Key<String> ascii(String name) {
            String n = validateName(name);
            if (n.endsWith(BINARY_SUFFIX)) {
                throw new IllegalArgumentException("ASCII key must not end with " + BINARY_SUFFIX + ": " + name);
            }
            return new Key<>(n, false);
        }

        /** A key for byte[] values; the name must end in {@code -bin}. */
        public static Key<byte[]> binary(String name) {
            String n = validateName(name);
            if (!n.endsWith(BINARY_SUFFIX)) {
                throw new IllegalArgumentException("binary key must end with " + BINARY_SUFFIX + ": " + name);
            }
            return new Key<>(n, true);
        }

        public String name() {
            return name;
        }

        public boolean isBinary() {
            return binary;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key<?> k && k.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }

        @Override
        public String toString() {
            return "Key{" + name + "}";
        }
    }

    private static final List<String> NO_NAMES = List.of();
    private static final List<byte[]> NO_VALUES = List.of();
    // allocated on the first put: most calls carry no metadata
    private List<String> names = NO_NAMES;
    private List<byte[]> values = NO_VALUES;

    private void ensureWritable() {
        if (names == NO_NAMES) {
            names = new ArrayList<>(4);
            values = new ArrayList<>(4);
        }
    }

    public Metadata() {
    }

    static String validateName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("metadata key must not be empty");
        }
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        for (int i = 0; i < lower.length(); i++) {
            char c = lower.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
            if (!ok) {
                throw new IllegalArgumentException("invalid character '" + c + "' in metadata key: " + name);
            }
        }
        return lower;
    }

    static void validateAsciiValue(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("metadata ASCII values must be printable ASCII");
            }
        }
    }

    /** Appends a value for the key. */
    public <T> Metadata put(Key<T> key, T value) {
        Objects.requireNonNull(value, "value");
        byte[] raw;
        if (key.binary) {
            raw = ((byte[]) value).clone();
        } else {
            String s = (String) value;
            validateAsciiValue(s);
            raw = s.getBytes(StandardCharsets.US_ASCII);
        }
        ensureWritable();
        names.add(key.name);
        values.add(raw);
        return this;
    }

    /** The last value for the key, or null. */
    public <T> T get(Key<T> key) {
        for (int i = names.size() - 1; i >= 0; i--) {
            if (names.get(i).equals(key.name)) {
                return decode(key, values.get(i));
            }
        }
        return null;
    }

    /** All values for the key in order, empty if none. */
    public <T> List<T> getAll(Key<T> key) {
        List<T> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i).equals(key.name)) {
                out.add(decode(key, values.get(i)));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static <T> T decode(Key<T> key, byte[] raw) {
        return key.binary ? (T) raw.clone() : (T) new String(raw, StandardCharsets.US_ASCII);
    }

    public boolean containsKey(Key<?> key) {
        return names.contains(key.name);
    }

    /** Removes every value of the key. */
    public void removeAll(Key<?> key) {
        if (names.isEmpty()) {
            return;
        }
        for (int i = names.size() - 1; i >= 0; i--) {
            if (names.get(i).equals(key.name)) {
                names.remove(i);
                values.remove(i);
            }
        }
    }

    /** The distinct key names, sorted. */
    public Set<String> keys() {
        return Collections.unmodifiableSet(new TreeSet<>(names));
    }

    /** Appends every entry of another metadata. */
    public void merge(Metadata other) {
        if (other.names.isEmpty()) {
            return;
        }
        ensureWritable();
        names.addAll(other.names);
        for (byte[] v : other.values) {
            values.add(v);
        }
    }

    /** Number of entries (a key with two values counts twice). */
    public int size() {
        return names.size();
    }

    public boolean isEmpty() {
        return names.isEmpty();
    }

    /** Entry name at index, for encoders ({@link RawMetadata}). */
    String nameAt(int i) {
        return names.get(i);
    }

    /** Raw entry value at index (not copied; do not modify), for encoders ({@link RawMetadata}). */
    byte[] rawValueAt(int i) {
        return values.get(i);
    }

    /** Appends a raw entry, for decoders ({@link RawMetadata}); validates the name and, for ASCII keys, the value. */
    void putRaw(String name, byte[] value) {
        String n = validateName(name);
        if (!n.endsWith(BINARY_SUFFIX)) {
            for (byte b : value) {
                if (b < 0x20 || b > 0x7e) {
                    throw new IllegalArgumentException("metadata value of ASCII key " + n + " is not printable ASCII");
                }
            }
        }
        ensureWritable();
        names.add(n);
        values.add(value);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Metadata(");
        for (int i = 0; i < names.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            String n = names.get(i);
            sb.append(n).append('=');
            sb.append(n.endsWith(BINARY_SUFFIX) ? Arrays.toString(values.get(i))
                    : new String(values.get(i), StandardCharsets.US_ASCII));
        }
        return sb.append(')').toString();
    }
}
