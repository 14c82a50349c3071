package dev.rdmarpc.core.internal.exec;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** The shared default callback executor and deadline timer (daemon threads). Internal: public for the other internal packages and for CommonBuilder and CallExecutors. */
public final class RpcExecutors {
    private static final CallbackExecutor CALLBACKS = new CallbackExecutor("rdmarpc-callback");
    private static final ScheduledExecutorService TIMER = newTimer();

    private RpcExecutors() {
    }

    /**
     * Executor for call callbacks when the user gives none. Each thread handing runs off (an I/O thread) has a lane
     * drained in bursts by a parked platform worker: one wake-up per burst of ready calls, not a thread start per
     * call. Handlers may block (a blocking stub, a sender waiting for flow-control room): when a lane's worker takes
     * no run for a millisecond while others wait, a virtual thread takes the lane over, so a blocked handler neither
     * holds an I/O thread nor starves the other calls of its connection, and further blocked handlers hold no OS
     * thread. Runs handed off from a virtual thread get a virtual thread each.
     */
    public static Executor defaultCallbackExecutor() {
        return CALLBACKS;
    }

    /** {@link #defaultCallbackExecutor()} as what it is, for core's own use (holding its lanes' wake-ups). */
    public static CallbackExecutor sharedCallbacks() {
        return CALLBACKS;
    }

    /** Single-thread scheduler for deadlines and handshake timeouts. */
    public static ScheduledExecutorService timer() {
        return TIMER;
    }

    /** Runs tasks on the calling thread. */
    public static Executor direct() {
        return Runnable::run;
    }

    static ThreadFactory daemonFactory(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemonFactory("rdmarpc-timer"));
        t.setRemoveOnCancelPolicy(true);
        return t;
    }
}
