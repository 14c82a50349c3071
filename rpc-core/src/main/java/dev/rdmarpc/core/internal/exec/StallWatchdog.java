package dev.rdmarpc.core.internal.exec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches the {@link CallbackLane}s that have runs queued behind a busy worker, once a {@link #TICK_NANOS tick}, and
 * lets a lane whose worker stayed inside one run for a whole tick hand the rest to a fresh worker: a blocked callback delays
 * the other calls of its lane by about a tick, never for as long as it blocks. Its thread sleeps while no lane needs
 * watching, and is started on the first lane that does.
 */
final class StallWatchdog {
    /** How long a lane's worker may keep its queued runs waiting before another worker takes them. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final String threadName;
    private final List<CallbackLane> watched = new ArrayList<>();
    private final List<CallbackLane> checking = new ArrayList<>();
    private Thread thread;

    StallWatchdog(String threadName) {
        this.threadName = threadName;
    }

    /** Checks this lane from the next tick on, until it is empty or nobody holds it. */
    void watch(CallbackLane lane) {
        synchronized (watched) {
            watched.add(lane);
            if (thread == null) {
                thread = new Thread(this::loop, threadName);
                thread.setDaemon(true);
                thread.start();
            } else if (watched.size() == 1) {
                watched.notifyAll();
            }
        }
    }

    private void loop() {
        while (true) {
            synchronized (watched) {
                while (watched.isEmpty()) {
                    try {
                        watched.wait();
                    } catch (InterruptedException e) {
                        // a daemon thread of the JVM's life: nothing asks it to stop
                    }
                }
            }
            LockSupport.parkNanos(this, TICK_NANOS);
            synchronized (watched) {
                checking.addAll(watched);
                watched.clear();
            }
            for (int i = 0; i < checking.size(); i++) {
                CallbackLane lane = checking.get(i);
                if (!lane.check()) {
                    checking.set(i, null);
                }
            }
            synchronized (watched) {
                for (CallbackLane lane : checking) {
                    if (lane != null) {
                        watched.add(lane);
                    }
                }
            }
            checking.clear();
        }
    }
}
