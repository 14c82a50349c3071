package dev.rdmarpc.transport.tcp;

import io.netty.util.concurrent.FastThreadLocalThread;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Makes the transport's I/O threads: daemon Netty threads named {@code rdmarpc-tcp-io-N}, N unique in the process. */
final class IoThreadFactory implements ThreadFactory {
    /** Prefix of every I/O thread's name. */
    static final String NAME_PREFIX = "rdmarpc-tcp-io-";

    private static final AtomicInteger NEXT = new AtomicInteger(1);

    @Override
    public Thread newThread(Runnable r) {
        Thread t = new FastThreadLocalThread(r, NAME_PREFIX + NEXT.getAndIncrement());
        t.setDaemon(true);
        return t;
    }
}
