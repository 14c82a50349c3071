package dev.rdmarpc.core.internal.flow;

/** Reads, for tests in other packages, the state of a {@link ConnectionSendWindow} that main code keeps package-private. */
public final class SendWindows {
    private SendWindows() {
    }

    /** What is left of the peer's connection window; Long.MAX_VALUE when it has none. */
    public static long left(ConnectionSendWindow window) {
        return window.left();
    }
}
