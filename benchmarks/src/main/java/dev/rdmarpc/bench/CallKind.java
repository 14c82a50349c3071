package dev.rdmarpc.bench;

import java.util.Locale;

/** What one measured "call" is. */
public enum CallKind {
    /** One unary call: the request's payload echoed back. */
    UNARY("unary"),
    /** One server-streaming call: a small request answered by a stream of messages of the payload size. */
    SERVER_STREAM("server-stream"),
    /** One round trip on a long-lived bidi stream: a message and its echo. */
    BIDI("bidi");

    private final String cliName;

    CallKind(String cliName) {
        this.cliName = cliName;
    }

    /** The name used on the command line and in results. */
    public String cliName() {
        return cliName;
    }

    /**
     * The kind of a command-line name.
     *
     * @throws IllegalArgumentException naming the valid names
     */
    public static CallKind parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (CallKind k : values()) {
            if (k.cliName.equals(n)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown call kind '" + name + "'; valid: unary, server-stream, bidi");
    }

    @Override
    public String toString() {
        return cliName;
    }
}
