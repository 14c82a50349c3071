package dev.rdmarpc.core;

/**
 * Internal: a {@link Metadata}'s entries as raw (name, bytes) pairs, for the wire codecs (rdmarpc's, and transport-tcp's
 * HTTP/2 translation) and grpc-compat only (a layering test holds that); applications use {@link Metadata}'s typed keys.
 */
public final class RawMetadata {
    private RawMetadata() {
    }

    /** The name of entry {@code i} (lower case). */
    public static String nameAt(Metadata md, int i) {
        return md.nameAt(i);
    }

    /** The value of entry {@code i} as sent (not copied: do not modify). */
    public static byte[] rawValueAt(Metadata md, int i) {
        return md.rawValueAt(i);
    }

    /**
     * Appends an entry as received (the value is kept, not copied).
     *
     * @throws IllegalArgumentException if the name is not a valid key, or the value of an ASCII key is not
     *                                  printable ASCII
     */
    public static void putRaw(Metadata md, String name, byte[] value) {
        md.putRaw(name, value);
    }
}
