package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * {@code poll(2)}, {@code eventfd(2)}, {@code read(2)}, {@code write(2)} and {@code close(2)} from the C library: waiting
 * on verbs file descriptors (completion channel, async fd) with a timeout, and a wakeup fd next to them.
 */
final class LibC {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(PathElement.groupElement("errno"));

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    static final StructLayout POLLFD = MemoryLayout.structLayout(
            JAVA_INT.withName("fd"), JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));
    static final short POLLIN = 0x1;

    private static final MethodHandle POLL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT),
            Linker.Option.captureCallState("errno"));

    private static final MethodHandle EVENTFD = LINKER.downcallHandle(
            LINKER.defaultLookup().find("eventfd").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT),
            Linker.Option.captureCallState("errno"));
    private static final MethodHandle READ = LINKER.downcallHandle(
            LINKER.defaultLookup().find("read").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG),
            Linker.Option.captureCallState("errno"));
    private static final MethodHandle WRITE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("write").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG),
            Linker.Option.captureCallState("errno"));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /** {@code EFD_NONBLOCK}. */
    static final int EFD_NONBLOCK = 0x800;
    /** {@code EFD_CLOEXEC}. */
    static final int EFD_CLOEXEC = 0x80000;

    private LibC() {
    }

    /**
     * Scratch memory for {@link #awaitReadable} and {@link #awaitEither}: two {@code struct pollfd}, the errno capture
     * state and an 8-byte counter for eventfd reads and writes.
     */
    static final StructLayout SCRATCH = scratchLayout();
    private static final long SCRATCH_COUNTER = SCRATCH.byteOffset(PathElement.groupElement("counter"));
    private static final long SCRATCH_CAPTURE = SCRATCH.byteOffset(PathElement.groupElement("capture"));

    private static StructLayout scratchLayout() {
        long used = 2 * POLLFD.byteSize() + CAPTURE_LAYOUT.byteSize();
        long pad = (8 - used % 8) % 8;
        return pad == 0
                ? MemoryLayout.structLayout(POLLFD.withName("pollfd"), POLLFD.withName("pollfd2"),
                        CAPTURE_LAYOUT.withName("capture"), JAVA_LONG.withName("counter"))
                : MemoryLayout.structLayout(POLLFD.withName("pollfd"), POLLFD.withName("pollfd2"),
                        CAPTURE_LAYOUT.withName("capture"), MemoryLayout.paddingLayout(pad), JAVA_LONG.withName("counter"));
    }

    /** Allocates scratch memory for {@link #awaitReadable} (once per waiter, so waiting allocates nothing). */
    static MemorySegment allocateScratch(Arena arena) {
        return arena.allocate(SCRATCH);
    }

    /**
     * Waits until {@code fd} is readable or {@code timeoutMillis} pass ({@code < 0}: forever); retries on EINTR.
     *
     * @param scratch from {@link #allocateScratch}, used by one thread at a time
     * @return true if readable
     */
    static boolean awaitReadable(MemorySegment scratch, int fd, long timeoutMillis, String what) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        MemorySegment cs = scratch.asSlice(SCRATCH_CAPTURE, CAPTURE_LAYOUT.byteSize());
        while (true) {
            int wait;
            if (timeoutMillis < 0) {
                wait = -1;
            } else {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                wait = (int) Math.max(0, Math.min(Integer.MAX_VALUE, left));
            }
            scratch.set(JAVA_INT, 0, fd);
            scratch.set(JAVA_SHORT, 4, POLLIN);
            scratch.set(JAVA_SHORT, 6, (short) 0);
            int rc;
            try {
                rc = (int) POLL.invokeExact(cs, scratch, 1L, wait);
            } catch (Throwable t) {
                throw LibIbverbs.rethrow(t);
            }
            if (rc > 0) {
                return true;
            }
            if (rc == 0) {
                if (wait == 0 || System.nanoTime() - deadline >= 0) {
                    return false;
                }
                continue;
            }
            int errno = (int) ERRNO.get(cs, 0L);
            if (errno != Errno.EINTR) {
                throw new VerbsException("poll(" + what + " fd " + fd + ")", errno);
            }
        }
    }

    /**
     * Waits until {@code fd0} or {@code fd1} is readable or {@code timeoutMillis} pass ({@code < 0}: forever); retries
     * on EINTR.
     *
     * @return bit 0 set if {@code fd0} is readable, bit 1 if {@code fd1} is; 0 on timeout
     */
    static int awaitEither(MemorySegment scratch, int fd0, int fd1, long timeoutMillis, String what) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        MemorySegment cs = scratch.asSlice(SCRATCH_CAPTURE, CAPTURE_LAYOUT.byteSize());
        while (true) {
            int wait;
            if (timeoutMillis < 0) {
                wait = -1;
            } else {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                wait = (int) Math.max(0, Math.min(Integer.MAX_VALUE, left));
            }
            scratch.set(JAVA_INT, 0, fd0);
            scratch.set(JAVA_SHORT, 4, POLLIN);
            scratch.set(JAVA_SHORT, 6, (short) 0);
            scratch.set(JAVA_INT, 8, fd1);
            scratch.set(JAVA_SHORT, 12, POLLIN);
            scratch.set(JAVA_SHORT, 14, (short) 0);
            int rc;
            try {
                rc = (int) POLL.invokeExact(cs, scratch, 2L, wait);
            } catch (Throwable t) {
                throw LibIbverbs.rethrow(t);
            }
            if (rc > 0) {
                int ready = 0;
                if (scratch.get(JAVA_SHORT, 6) != 0) {
                    ready |= 1;
                }
                if (scratch.get(JAVA_SHORT, 14) != 0) {
                    ready |= 2;
                }
                return ready;
            }
            if (rc == 0) {
                if (wait == 0 || System.nanoTime() - deadline >= 0) {
                    return 0;
                }
                continue;
            }
            int errno = (int) ERRNO.get(cs, 0L);
            if (errno != Errno.EINTR) {
                throw new VerbsException("poll(" + what + " fds " + fd0 + ", " + fd1 + ")", errno);
            }
        }
    }

    /** {@code eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)}. */
    static int eventFd(MemorySegment scratch) {
        MemorySegment cs = scratch.asSlice(SCRATCH_CAPTURE, CAPTURE_LAYOUT.byteSize());
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(cs, 0, EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (Throwable t) {
            throw LibIbverbs.rethrow(t);
        }
        if (fd < 0) {
            throw new VerbsException("eventfd", (int) ERRNO.get(cs, 0L));
        }
        return fd;
    }

    /** Adds 1 to an eventfd's counter ({@code write(2)} of 8 bytes); EAGAIN (counter full) is ignored. */
    static void eventFdSignal(MemorySegment scratch, int fd) {
        MemorySegment cs = scratch.asSlice(SCRATCH_CAPTURE, CAPTURE_LAYOUT.byteSize());
        MemorySegment counter = scratch.asSlice(SCRATCH_COUNTER, 8);
        counter.set(JAVA_LONG, 0, 1L);
        long rc;
        try {
            rc = (long) WRITE.invokeExact(cs, fd, counter, 8L);
        } catch (Throwable t) {
            throw LibIbverbs.rethrow(t);
        }
        if (rc < 0) {
            int errno = (int) ERRNO.get(cs, 0L);
            if (errno != Errno.EAGAIN && errno != Errno.EINTR) {
                throw new VerbsException("write(eventfd " + fd + ")", errno);
            }
        }
    }

    /** Resets an eventfd's counter ({@code read(2)} of 8 bytes); returns the count read, 0 if none was pending. */
    static long eventFdDrain(MemorySegment scratch, int fd) {
        MemorySegment cs = scratch.asSlice(SCRATCH_CAPTURE, CAPTURE_LAYOUT.byteSize());
        MemorySegment counter = scratch.asSlice(SCRATCH_COUNTER, 8);
        long rc;
        try {
            rc = (long) READ.invokeExact(cs, fd, counter, 8L);
        } catch (Throwable t) {
            throw LibIbverbs.rethrow(t);
        }
        if (rc < 0) {
            int errno = (int) ERRNO.get(cs, 0L);
            if (errno == Errno.EAGAIN || errno == Errno.EINTR) {
                return 0;
            }
            throw new VerbsException("read(eventfd " + fd + ")", errno);
        }
        return counter.get(JAVA_LONG, 0);
    }

    /** {@code close(2)}. */
    static void close(int fd) {
        try {
            int rc = (int) CLOSE.invokeExact(fd);
            if (rc != 0) {
                throw new IllegalStateException("close(" + fd + ") failed");
            }
        } catch (Throwable t) {
            throw LibIbverbs.rethrow(t);
        }
    }
}
