package dev.rdmarpc.transport.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An {@code eventfd(2)} that a completion poller waits on next to its {@link CompletionChannel}, so that other threads
 * can wake it ({@link #signal()}) without a completion. Signalling and draining allocate nothing.
 */
public final class EventFd implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment signalScratch;
    private final MemorySegment drainScratch;
    private final int fd;
    private volatile boolean closed;

    /** Creates a non-blocking, close-on-exec eventfd. */
    public EventFd() {
        this.signalScratch = LibC.allocateScratch(arena);
        this.drainScratch = LibC.allocateScratch(arena);
        int created;
        try {
            created = LibC.eventFd(drainScratch);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.fd = created;
    }

    /** The file descriptor (readable while signalled and not drained). */
    public int fd() {
        return fd;
    }

    /** Wakes the waiter; safe from any thread (serialised here so the scratch memory is not shared). */
    public synchronized void signal() {
        if (!closed) {
            LibC.eventFdSignal(signalScratch, fd);
        }
    }

    /** Resets the counter; only the waiting thread calls it. Returns how many signals were pending. */
    public long drain() {
        return closed ? 0 : LibC.eventFdDrain(drainScratch, fd);
    }

    /** Closes the fd. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            LibC.close(fd);
            arena.close();
        }
    }
}
