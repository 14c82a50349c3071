package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.TransportConfig;
import dev.rdmarpc.core.testing.Await;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

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

    /** The transport's I/O threads now alive. */
    static Set<Thread> ioThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(IoThreadFactory.NAME_PREFIX) && t.isAlive())
                .collect(Collectors.toSet());
    }

    /**
     * Waits until every I/O thread alive now, other than those in {@code before}, has ended. A group's termination
     * is signalled from its thread just before that thread exits, so a look right after a close may still see it;
     * threads of earlier tests that end meanwhile are no concern of the caller.
     */
    static void awaitNoIoThreadsBut(Set<Thread> before, String what) {
        Await.until(() -> before.containsAll(ioThreads()), () -> what + ": " + ioThreads().stream()
                .filter(t -> !before.contains(t)).map(Thread::getName).sorted().toList());
    }
}
