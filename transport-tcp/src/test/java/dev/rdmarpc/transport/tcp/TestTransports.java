package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.TransportConfig;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Transport settings for tests: loopback only, each I/O flavor this host has. */
final class TestTransports {
    static final InetSocketAddress ANY_LOOPBACK_PORT = new InetSocketAddress("127.0.0.1", 0);

    private TestTransports() {
    }

    static TransportConfig config(String io) {
        return new TransportConfig(SlabPool.shared(), 0, io);
    }

    /** Names of the I/O flavors available here, for parameterized tests. */
    static List<String> flavors() {
        List<String> names = new ArrayList<>();
        for (IoFlavor f : IoFlavor.values()) {
            if (f.isAvailable()) {
                names.add(f.configName());
            }
        }
        return names;
    }

    /** Threads of this transport now alive. */
    /**
     * I/O threads alive once those that are ending have ended: a group's termination is signalled from its thread
     * just before that thread exits, so a count taken right after a close may still see it.
     */
    static long ioThreadsSettled(long expected) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        long n;
        while ((n = ioThreads()) != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return n;
    }

    static long ioThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(IoThreadFactory.NAME_PREFIX) && t.isAlive())
                .count();
    }
}
