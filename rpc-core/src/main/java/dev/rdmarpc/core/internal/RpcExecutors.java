package dev.rdmarpc.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** The shared default callback executor and deadline timer (daemon threads). Internal: public only for RpcChannel and RpcServer. */
public final class RpcExecutors {
    private static final Executor CALLBACKS = newCallbackExecutor("rdmarpc-callback");
    private static final ScheduledExecutorService TIMER = newTimer();

    private RpcExecutors() {
    }

    /**
     * Executor for call callbacks when the user gives none: a virtual thread per task. Handlers may block (a
     * blocking stub, a sender waiting for flow-control room) without holding an OS thread: a blocked virtual thread
     * unmounts from its carrier, so a thousand stalled streams cost a thousand small heap objects, not a thousand
     * threads. The carriers are the JDK's work-stealing scheduler (one per core by default,
     * {@code -Djdk.virtualThreadScheduler.parallelism} to change).
     */
    public static Executor defaultCallbackExecutor() {
        return CALLBACKS;
    }

    /** Single-thread scheduler for deadlines and handshake timeouts. */
    static ScheduledExecutorService timer() {
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

    private static Executor newCallbackExecutor(String name) {
        ThreadFactory virtual = Thread.ofVirtual().name(name).factory();
        return task -> virtual.newThread(task).start();
    }

    private static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemonFactory("rdmarpc-timer"));
        t.setRemoveOnCancelPolicy(true);
        return t;
    }
}
