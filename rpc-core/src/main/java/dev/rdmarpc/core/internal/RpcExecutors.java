package dev.rdmarpc.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The shared default callback executor and deadline timer (daemon threads). Internal: public only for RpcChannel and RpcServer. */
public final class RpcExecutors {
    private static final Executor CALLBACKS = newCallbackExecutor("rdmarpc-callback");
    private static final ScheduledExecutorService TIMER = newTimer();

    private RpcExecutors() {
    }

    /** Executor for call callbacks when the user gives none: a cached pool of daemon threads. */
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

    private static Executor newCallbackExecutor(String prefix) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), daemonFactory(prefix));
        return pool;
    }

    private static ScheduledExecutorService newTimer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemonFactory("rdmarpc-timer"));
        t.setRemoveOnCancelPolicy(true);
        return t;
    }
}
