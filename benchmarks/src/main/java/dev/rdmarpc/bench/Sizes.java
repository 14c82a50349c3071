package dev.rdmarpc.bench;

import java.util.Locale;

/** Parses and prints byte sizes: "64", "4k", "64KiB", "1m", "1MiB" (binary multiples). */
public final class Sizes {
    private Sizes() {
    }

    /**
     * The number of bytes a size string means.
     *
     * @throws IllegalArgumentException when it is not a non-negative size below 2 GiB
     */
    public static int parse(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long mult = 1;
        if (s.endsWith("kib") || s.endsWith("kb") || s.endsWith("k")) {
            mult = 1024;
            s = s.substring(0, s.indexOf('k'));
        } else if (s.endsWith("mib") || s.endsWith("mb") || s.endsWith("m")) {
            mult = 1024 * 1024;
            s = s.substring(0, s.indexOf('m'));
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        long v;
        try {
            v = Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (examples: 64, 4k, 1m)");
        }
        if (v < 0 || v * mult > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("size out of range: '" + text + "'");
        }
        return (int) (v * mult);
    }

    /** A short form: 64B, 4KiB, 1MiB, 1536B. */
    public static String format(long bytes) {
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
            return (bytes >> 20) + "MiB";
        }
        if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
            return (bytes >> 10) + "KiB";
        }
        return bytes + "B";
    }
}
