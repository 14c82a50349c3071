package dev.rdmarpc.transport.tcp;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;

/** Stops an event loop group: its pending tasks run (closing channels report onClosed), then its threads end. */
final class EventLoops {
    /** Longest wait for a group's threads to end. */
    static final long SHUTDOWN_WAIT_MILLIS = 5_000;

    private EventLoops() {
    }

    /** Shuts {@code group} down and waits briefly for its threads, unless called on one of them. */
    static void shutdown(EventLoopGroup group) {
        Future<?> done = group.shutdownGracefully(0, SHUTDOWN_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        if (isInside(group)) {
            return;
        }
        if (!done.awaitUninterruptibly(SHUTDOWN_WAIT_MILLIS + 1_000)) {
            TcpFrameConnection.LOG.log(Level.WARNING, "tcp I/O threads did not stop within {0} ms", SHUTDOWN_WAIT_MILLIS);
        }
    }

    /** Whether the calling thread is one of the group's threads. */
    static boolean isInside(EventLoopGroup group) {
        for (EventExecutor e : group) {
            if (e.inEventLoop()) {
                return true;
            }
        }
        return false;
    }
}
