package dev.rdmarpc.transport.tcp;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Arms Netty's leak detector with a listener that records every leak report, before any Netty
 * buffer class exists (a launcher session listener runs before the first test class loads).
 */
public final class NettyLeakRecorder implements LauncherSessionListener {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        install();
    }

    /** Installs the recording detector factory once. */
    static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
                ResourceLeakDetector<T> d = new ResourceLeakDetector<>(resource, samplingInterval, maxActive);
                d.setLeakListener((type, records) -> LEAKS.add(type + " leaked:" + records));
                return d;
            }
        });
    }

    /** Leak reports so far. */
    static List<String> leaks() {
        return List.copyOf(LEAKS);
    }

    static void clear() {
        LEAKS.clear();
    }
}
