package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.exec.RpcExecutors;

import java.util.concurrent.Executor;

/** The executor rdmarpc runs call callbacks and handlers on when the user gives none, for layers built on top of it. */
public final class CallExecutors {
    private CallExecutors() {
    }

    /**
     * The shared default: each thread that hands runs off (a transport's I/O thread) has a lane that one parked worker
     * drains in bursts, so a burst of ready calls costs one wake-up; a worker that blocks (a handler waiting on
     * another call, on flow control, on I/O) is taken over by a virtual thread, so blocking is allowed. Its threads are
     * daemons that nothing needs to shut down.
     */
    public static Executor shared() {
        return RpcExecutors.defaultCallbackExecutor();
    }
}
