package dev.rdmarpc.core;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;

/**
 * An executor whose tasks run on the one thread that waits in {@link #waitAndDrain()}: blocking
 * stubs use it so a call's callbacks run on the caller's own thread, with no hand-off.
 */
final class ThreadlessExecutor implements Executor {
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile Thread waiter;

    ThreadlessExecutor() {
        this.waiter = Thread.currentThread();
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        LockSupport.unpark(waiter);
    }

    /** Runs queued tasks; parks until at least one has run. Throws if interrupted. */
    void waitAndDrain() throws InterruptedException {
        Runnable r = tasks.poll();
        while (r == null) {
            LockSupport.park(this);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            r = tasks.poll();
        }
        do {
            r.run();
        } while ((r = tasks.poll()) != null);
    }

    /** Runs whatever is queued without waiting. */
    void drain() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            r.run();
        }
    }
}
