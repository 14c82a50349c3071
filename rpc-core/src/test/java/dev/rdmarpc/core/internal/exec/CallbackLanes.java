package dev.rdmarpc.core.internal.exec;

/** Reads, for tests in other packages, the state of a {@link CallbackLane} that main code keeps package-private. */
public final class CallbackLanes {
    private CallbackLanes() {
    }

    /** Whether no worker holds {@code lane}. */
    public static boolean isIdle(CallbackLane lane) {
        return lane.isIdle();
    }
}
