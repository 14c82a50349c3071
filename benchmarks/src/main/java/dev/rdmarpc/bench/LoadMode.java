package dev.rdmarpc.bench;

import java.util.Locale;

/** How calls are issued. */
public enum LoadMode {
    /** Each of {@code concurrency} workers sends its next call when the previous one completes. */
    CLOSED("closed"),
    /**
     * Calls are sent on a fixed schedule ({@code --rate}) whatever the responses do, and each
     * latency is measured from the call's intended send time (no coordinated omission).
     */
    OPEN("open");

    private final String cliName;

    LoadMode(String cliName) {
        this.cliName = cliName;
    }

    /** The name used on the command line and in results. */
    public String cliName() {
        return cliName;
    }

    /**
     * The mode of a command-line name.
     *
     * @throws IllegalArgumentException naming the valid names
     */
    public static LoadMode parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (LoadMode m : values()) {
            if (m.cliName.equals(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + name + "'; valid: closed, open");
    }

    @Override
    public String toString() {
        return cliName;
    }
}
