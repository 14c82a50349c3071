package dev.rdmarpc.bench;

/** How calls are issued. */
public enum LoadMode implements CliNamed {
    /** Each of {@code concurrency} workers sends its next call when the previous one completes. */
    CLOSED,
    /**
     * Calls are sent on a fixed schedule ({@code --rate}) whatever the responses do, and each
     * latency is measured from the call's intended send time (no coordinated omission).
     */
    OPEN;

    @Override
    public String toString() {
        return cliName();
    }
}
