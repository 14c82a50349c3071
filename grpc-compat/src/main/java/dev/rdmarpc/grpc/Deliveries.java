package dev.rdmarpc.grpc;

import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Where rdmarpc runs the call callbacks that grpc-compat turns into grpc stream-listener calls.
 *
 * <p>grpc expects a transport to call its stream listeners with no transport lock held: with
 * {@code directExecutor()} they run application code inline, which may block briefly or act on
 * other calls. rdmarpc core asks its executor to run a call's drain while it holds that call's
 * lock, so this executor never runs the drain there and then, yet avoids a thread hop wherever it
 * can:
 * <ul>
 *   <li>on a thread inside a grpc-compat call into core ({@link #enter()}/{@link #exit()}: a grpc
 *       thread sending, requesting, closing), the drain runs on that thread as soon as the call
 *       into core has returned (as grpc's in-process transport delivers);</li>
 *   <li>on a Netty event loop (the TCP transport's I/O threads), the drain is queued on that
 *       loop: it runs on the same thread once the frame being handled is done;</li>
 *   <li>anywhere else (core's timer thread, the RDMA completion poller), it is handed to
 *       {@link #pool()}.</li>
 * </ul>
 * A call's callbacks still run one at a time and in order: core schedules one drain at a time.
 * Once core runs inline drains outside the call's lock, this can become a direct executor.
 */
final class Deliveries {
    private static final System.Logger LOG = System.getLogger(Deliveries.class.getName());

    /** The executor grpc-compat gives core for every call. */
    static final Executor EXECUTOR = Deliveries::execute;

    private static final Executor POOL = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("rdmarpc-grpc-callback-", 1).daemon().factory());
    private static final boolean NETTY = nettyPresent();
    private static final ThreadLocal<Trampoline> TRAMPOLINE = ThreadLocal.withInitial(Trampoline::new);

    /** Per-thread state: how deep in calls into core, and the drains they scheduled. */
    private static final class Trampoline {
        int depth;
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>(2);
    }

    private Deliveries() {
    }

    /** A cached pool of daemon threads: for drains that run neither inline nor on a Netty loop, and other async work. */
    static Executor pool() {
        return POOL;
    }

    private static void execute(Runnable task) {
        Trampoline t = TRAMPOLINE.get();
        if (t.depth > 0) {
            t.tasks.add(task);
            return;
        }
        Executor loop = NETTY ? NettyLoops.current() : null;
        if (loop != null) {
            try {
                loop.execute(task);
                return;
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // the loop is shutting down: the pool delivers what is left
            }
        }
        POOL.execute(task);
    }

    /** A grpc thread is about to call into rdmarpc core. Pair with {@link #exit()} in a finally. */
    static void enter() {
        TRAMPOLINE.get().depth++;
    }

    /**
     * The call into core returned (its lock is released): runs the drain it scheduled here, on
     * this thread. Should it have scheduled drains of other calls too, those go to the pool, so
     * that one call's callbacks never wait behind another's on this thread.
     */
    static void exit() {
        Trampoline t = TRAMPOLINE.get();
        if (--t.depth > 0) {
            return;
        }
        Runnable first = t.tasks.poll();
        if (first == null) {
            return;
        }
        Runnable more;
        while ((more = t.tasks.poll()) != null) {
            POOL.execute(more);
        }
        try {
            first.run();
        } catch (RuntimeException | Error e) {
            LOG.log(Level.WARNING, "a call callback threw", e);
        }
    }

    private static boolean nettyPresent() {
        try {
            NettyLoops.current();
            return true;
        } catch (LinkageError e) {
            return false;
        }
    }

    /** The Netty event loop of the calling thread, if it is one (kept apart so Netty stays optional). */
    private static final class NettyLoops {
        static Executor current() {
            return io.netty.util.internal.ThreadExecutorMap.currentExecutor();
        }
    }
}
