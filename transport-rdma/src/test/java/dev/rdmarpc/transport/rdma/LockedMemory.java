package dev.rdmarpc.transport.rdma;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's locked-memory accounting (Linux): whether it may pin memory beyond RLIMIT_MEMLOCK (CAP_IPC_LOCK),
 * how much it has pinned ({@code VmPin}: memory regions count there), and its soft limit, which a test lowers and
 * restores through {@code setrlimit(2)}.
 */
final class LockedMemory {
    private static final int RLIMIT_MEMLOCK = 8;
    private static final int CAP_IPC_LOCK = 14;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle GETRLIMIT = LINKER.downcallHandle(LINKER.defaultLookup().find("getrlimit").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS));
    private static final MethodHandle SETRLIMIT = LINKER.downcallHandle(LINKER.defaultLookup().find("setrlimit").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, java.lang.foreign.ValueLayout.ADDRESS));

    private LockedMemory() {
    }

    /** Whether the process holds CAP_IPC_LOCK (then the limit does not apply to it). */
    static boolean ignoresTheLimit() throws IOException {
        return new BigInteger(status("CapEff"), 16).testBit(CAP_IPC_LOCK);
    }

    /** Bytes this process has pinned ({@code VmPin}). */
    static long pinnedBytes() throws IOException {
        return Long.parseLong(status("VmPin").replace("kB", "").strip()) * 1024;
    }

    /** The soft and hard RLIMIT_MEMLOCK. */
    static long[] limits() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rlimit = arena.allocate(16, 8);
            if ((int) GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, rlimit) != 0) {
                throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) failed");
            }
            return new long[]{rlimit.get(JAVA_LONG, 0), rlimit.get(JAVA_LONG, 8)};
        }
    }

    /** Sets the soft RLIMIT_MEMLOCK (at most the hard one), keeping the hard one. */
    static void setSoftLimit(long bytes) throws Throwable {
        long hard = limits()[1];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rlimit = arena.allocate(16, 8);
            rlimit.set(JAVA_LONG, 0, bytes);
            rlimit.set(JAVA_LONG, 8, hard);
            if ((int) SETRLIMIT.invokeExact(RLIMIT_MEMLOCK, rlimit) != 0) {
                throw new IllegalStateException("setrlimit(RLIMIT_MEMLOCK, " + bytes + ") failed");
            }
        }
    }

    private static String status(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).strip();
            }
        }
        throw new IOException(field + " is not in /proc/self/status");
    }
}
