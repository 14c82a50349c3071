package dev.rdmarpc.bench;

/** What one measured "call" is. */
public enum CallKind implements CliNamed {
    /** One unary call: the request's payload echoed back. */
    UNARY,
    /** One server-streaming call: a small request answered by a stream of messages of the payload size. */
    SERVER_STREAM,
    /** One round trip on a long-lived bidi stream: a message and its echo. */
    BIDI;

    @Override
    public String toString() {
        return cliName();
    }
}
