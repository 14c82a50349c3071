package dev.rdmarpc.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/** CPU time this JVM process has used, all threads, user and system, as the OS counts it. */
public final class ProcessCpu {
    private static final OperatingSystemMXBean OS = ManagementFactory.getOperatingSystemMXBean();

    private ProcessCpu() {
    }

    /** Nanoseconds of CPU used so far (the JDK reads it from the OS: /proc/self/stat utime+stime on Linux), or -1. */
    public static long nanos() {
        if (OS instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return -1;
    }
}
