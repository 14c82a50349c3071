package dev.rdmarpc.core.spi;

import dev.rdmarpc.core.buffer.SlabPool;

/**
 * Settings a transport is created with.
 *
 * @param pool        where frame buffers come from
 * @param ioThreads   I/O threads (0: the transport's default)
 * @param nativeIo    "auto" (io_uring, then epoll, then NIO), "io_uring", "epoll" or "nio"
 */
public record TransportConfig(SlabPool pool, int ioThreads, String nativeIo) {
    public static TransportConfig defaults() {
        return new TransportConfig(SlabPool.shared(), 0, System.getProperty("rdmarpc.io", "auto"));
    }
}
