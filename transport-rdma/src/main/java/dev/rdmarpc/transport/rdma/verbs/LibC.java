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

/** {@code poll(2)} from the C library, to wait on a verbs file descriptor (completion channel, async fd) with a timeout. */
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

    private LibC() {
    }

    /** Scratch memory for {@link #awaitReadable}: a {@code struct pollfd} and the errno capture state. */
    static final StructLayout SCRATCH = MemoryLayout.structLayout(
            POLLFD.withName("pollfd"), CAPTURE_LAYOUT.withName("capture"));
    private static final long SCRATCH_CAPTURE = SCRATCH.byteOffset(PathElement.groupElement("capture"));

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
}
