package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabPool;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * What an RDMA server holds at one moment, for the scale harness: open RDMA connections and queue pairs, slab bytes
 * registered with the device (every slab of the shared pool is one memory region per device context), the heap after
 * a full GC, the JVM's native memory (Native Memory Tracking, when the JVM runs with
 * {@code -XX:NativeMemoryTracking=summary}: committed in total, in "Other" where FFM arenas and direct buffers are
 * counted, and in thread stacks) and the process's resident set.
 *
 * @param connections      open RDMA connections in this process
 * @param queuePairs       queue pairs alive on its device contexts
 * @param registeredBytes  slab bytes registered, summed over device contexts
 * @param slabRegions      memory regions of slabs
 * @param heapAfterGc      heap bytes in use after {@link System#gc()}
 * @param nativeCommitted  NMT's committed total less the heap's (-1 without NMT)
 * @param nativeOther      NMT's "Other" committed (-1 without NMT)
 * @param threadStacks     NMT's "Thread" committed (-1 without NMT)
 * @param rss              resident set ({@code VmRSS}), bytes
 */
record ServerFootprint(long connections, long queuePairs, long registeredBytes, long slabRegions, long heapAfterGc,
                       long nativeCommitted, long nativeOther, long threadStacks, long rss) {
    private static final Pattern CATEGORY = Pattern.compile("-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
    private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB");

    /** Measures now, after trimming the slab pool (unused slabs go) and a full GC. */
    static ServerFootprint now() {
        SlabPool.shared().trim();
        System.gc();
        System.gc();
        List<RdmaDeviceContext> contexts = DeviceContexts.all();
        long queuePairs = contexts.stream().mapToLong(RdmaDeviceContext::queuePairs).sum();
        RdmaMetrics.Snapshot s = RdmaMetrics.snapshot();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        String nmt = nativeMemorySummary();
        long total = nmt == null ? -1 : total(nmt);
        long javaHeap = nmt == null ? 0 : category(nmt, "Java Heap");
        return new ServerFootprint(s.connections(), queuePairs, SlabPool.shared().reservedBytes() * contexts.size(),
                s.slabRegions(), heap, total < 0 ? -1 : total - javaHeap, nmt == null ? -1 : category(nmt, "Other"),
                nmt == null ? -1 : category(nmt, "Thread"), residentSetSize());
    }

    /** {@code jcmd PID VM.native_memory summary} from inside, or null when NMT is off. */
    private static String nativeMemorySummary() {
        try {
            Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
                    new Object[]{new String[]{"summary"}}, new String[]{String[].class.getName()});
            String text = String.valueOf(out);
            return text.contains("Total:") ? text : null;
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }

    private static long total(String nmt) {
        Matcher m = TOTAL.matcher(nmt);
        return m.find() ? Long.parseLong(m.group(2)) << 10 : -1;
    }

    private static long category(String nmt, String name) {
        Matcher m = CATEGORY.matcher(nmt);
        while (m.find()) {
            if (m.group(1).trim().equals(name)) {
                return Long.parseLong(m.group(3)) << 10;
            }
        }
        return 0;
    }

    private static long residentSetSize() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return -1;
    }
}
