package dev.rdmarpc.core.testing;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test-time checks of the lock rules of docs/ARCHITECTURE.md "Locks", read from the JVM's own record of what the
 * calling thread holds (its locked monitors and ownable synchronizers, {@link ThreadMXBean#getThreadInfo(long[],
 * boolean, boolean)}): no hook in main code. {@link #assertNoLockHeld} is for application code (listeners, handlers,
 * interceptors, observers, executors, an attachment's release callback): it fails if the thread holds a monitor of a
 * class of rdmarpc's main code or a {@code ReentrantLock} (the main code's only one is the RDMA transport's
 * {@code SendPath.lock}; a Netty event loop's own, held while the loop runs, is not counted). {@link #assertSendOrder}
 * is for a test transport's send: at most one stream monitor, taken before any other lock of rdmarpc's. A violation
 * throws and is also recorded, since a callback's exception may be swallowed by the thread that ran it:
 * {@link #assertNoneRecorded} fails a test that recorded one.
 *
 * <p>The JVM reports no locks of a virtual thread (its {@code ThreadInfo} is null): a check made on one is counted
 * as skipped ({@link #skipped()}), not passed.
 */
public final class LockCheck {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** The stream classes whose monitors are the call's lock. */
    private static final List<String> STREAMS = List.of(
            "dev.rdmarpc.core.internal.call.ClientStream", "dev.rdmarpc.core.internal.call.ServerStream");
    /** ServerCalls' response observers, whose monitors come before the stream's in the order. */
    private static final String RESPONSE_OBSERVERS = "dev.rdmarpc.core.ServerCalls$";
    private static final String SEND_PATH = "dev.rdmarpc.transport.rdma.SendPath";
    private static final ConcurrentHashMap<String, Boolean> MAIN_CLASSES = new ConcurrentHashMap<>();
    private static final ConcurrentLinkedQueue<String> VIOLATIONS = new ConcurrentLinkedQueue<>();
    private static final AtomicLong CHECKED = new AtomicLong();
    private static final AtomicLong SKIPPED = new AtomicLong();

    private LockCheck() {
    }

    /** From application code run by rdmarpc: fails if this thread holds any lock of rdmarpc's main code. */
    public static void assertNoLockHeld(String where) {
        List<String> held = heldLocks();
        if (held != null && !held.isEmpty()) {
            fail(where + " ran holding " + held);
        }
    }

    /**
     * From a test transport's send (called by core with its locks held): fails if this thread holds more than one
     * stream monitor (a stream's lock taken inside another's), or a stream monitor taken after another lock of
     * rdmarpc's (the order is stream, then its connection, then the transport).
     */
    public static void assertSendOrder(String where) {
        ThreadInfo info = info();
        if (info == null) {
            return;
        }
        MonitorInfo[] monitors = info.getLockedMonitors(); // innermost first
        java.util.Set<Integer> streams = new java.util.HashSet<>(2); // a monitor taken again is listed again
        boolean other = false;
        for (int i = monitors.length - 1; i >= 0; i--) {
            String c = monitors[i].getClassName();
            if (!isMain(c)) {
                continue;
            }
            if (!STREAMS.contains(c)) {
                other |= !c.startsWith(RESPONSE_OBSERVERS); // these come before the stream
            } else if (streams.add(monitors[i].getIdentityHashCode()) && (streams.size() > 1 || other)) {
                fail(where + (other ? " ran holding a stream monitor taken inside another lock of rdmarpc's: "
                        : " ran holding two stream monitors: ") + describe(info));
            }
        }
    }

    /**
     * The locks of rdmarpc's main code this thread holds, described (monitors outermost last), or null when the JVM
     * cannot tell (a virtual thread).
     */
    public static List<String> heldLocks() {
        ThreadInfo info = info();
        if (info == null) {
            return null;
        }
        List<String> held = new ArrayList<>(2);
        for (MonitorInfo m : info.getLockedMonitors()) {
            if (isMain(m.getClassName())) {
                held.add("the monitor of " + m.getClassName() + " (taken in " + m.getLockedStackFrame() + ")");
            }
        }
        int foreign = onNettyEventLoop(info) ? 1 : 0; // the event loop's own processingLock, held while it runs
        for (LockInfo l : info.getLockedSynchronizers()) {
            if (l.getClassName().startsWith("java.util.concurrent.locks.ReentrantLock$") && foreign-- <= 0) {
                held.add("a ReentrantLock (SendPath.lock in rdmarpc's main code) " + l);
            }
        }
        return held;
    }

    /** Whether the thread is a Netty event loop, which holds a {@code ReentrantLock} of Netty's while it runs. */
    private static boolean onNettyEventLoop(ThreadInfo info) {
        for (StackTraceElement e : info.getStackTrace()) {
            if (e.getClassName().startsWith("io.netty.util.concurrent.SingleThreadEventExecutor")) {
                return true;
            }
        }
        return false;
    }

    /** Checks made on threads whose locks the JVM reports. */
    public static long checked() {
        return CHECKED.get();
    }

    /** Checks skipped because the JVM reports no locks of the thread (a virtual thread). */
    public static long skipped() {
        return SKIPPED.get();
    }

    /** Fails if any check recorded a violation since the last call (which clears the record). */
    public static void assertNoneRecorded() {
        List<String> seen = new ArrayList<>();
        String v;
        while ((v = VIOLATIONS.poll()) != null) {
            seen.add(v);
        }
        if (!seen.isEmpty()) {
            throw new AssertionError("lock rule violations recorded since the last check (by this test, or by calls of an"
                    + " earlier one still ending): " + seen);
        }
    }

    private static ThreadInfo info() {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            SKIPPED.incrementAndGet();
            return null;
        }
        long[] id = {t.threadId()};
        ThreadInfo info = THREADS.getThreadInfo(id, true, false)[0];
        CHECKED.incrementAndGet();
        // ownable synchronizers cost a walk of the whole heap: asked for only where SendPath.lock may be held
        return inSendPath(info) ? THREADS.getThreadInfo(id, true, true)[0] : info;
    }

    /** Whether a frame of the RDMA transport's SendPath, the only holder of a ReentrantLock of ours, is on the stack. */
    private static boolean inSendPath(ThreadInfo info) {
        for (StackTraceElement e : info.getStackTrace()) {
            if (e.getClassName().startsWith(SEND_PATH)) {
                return true;
            }
        }
        return false;
    }

    private static void fail(String message) {
        VIOLATIONS.add(message + " on " + Thread.currentThread());
        throw new AssertionError(message);
    }

    private static String describe(ThreadInfo info) {
        StringBuilder b = new StringBuilder();
        for (MonitorInfo m : info.getLockedMonitors()) {
            b.append(m.getClassName()).append(" at ").append(m.getLockedStackFrame()).append("; ");
        }
        return b.toString();
    }

    /** Whether {@code className} is a class of rdmarpc's main code (not of a test: those come from test-classes). */
    static boolean isMain(String className) {
        if (!className.startsWith("dev.rdmarpc.")) {
            return false;
        }
        return MAIN_CLASSES.computeIfAbsent(className, LockCheck::loadedFromMain);
    }

    private static boolean loadedFromMain(String className) {
        try {
            Class<?> c = Class.forName(className, false, LockCheck.class.getClassLoader());
            CodeSource source = c.getProtectionDomain().getCodeSource();
            return source == null || !source.getLocation().toString().contains("test-classes");
        } catch (ClassNotFoundException | LinkageError e) {
            return true;
        }
    }
}
