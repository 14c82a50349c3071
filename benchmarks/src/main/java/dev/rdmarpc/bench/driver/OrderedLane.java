package dev.rdmarpc.bench.driver;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A lane over one long-lived bidi stream: each call is one request message, completed by the next
 * response message (responses come back in request order). Sends are serialized without a lock:
 * whichever thread finds the lane idle sends everything queued, the others only queue.
 */
abstract class OrderedLane implements Lane {
    private final LaneListener listener;
    private final StartFifo starts = new StartFifo();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicInteger queued = new AtomicInteger();
    private volatile boolean closeRequested;
    private boolean halfClosed;
    private volatile boolean dead;

    OrderedLane(LaneListener listener) {
        this.listener = listener;
    }

    /** Sends one request message on the stream (called by one thread at a time). */
    protected abstract void sendOne();

    /** Half-closes the stream (called by one thread at a time, once). */
    protected abstract void halfClose();

    @Override
    public final void call(long startNanos) {
        if (dead) {
            listener.onError(this, startNanos, new IllegalStateException("stream already failed"));
            return;
        }
        starts.add(this, startNanos);
        queued.incrementAndGet();
        drain();
    }

    @Override
    public final void close() {
        closeRequested = true;
        drain();
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        while (true) {
            while (queued.get() > 0 && !dead) {
                queued.decrementAndGet();
                try {
                    sendOne();
                } catch (RuntimeException e) {
                    failed(e);
                }
            }
            if (closeRequested && !halfClosed && !dead) {
                halfClosed = true;
                try {
                    halfClose();
                } catch (RuntimeException ignored) {
                    // the stream is gone already
                }
            }
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    /** A response message arrived: completes the oldest call. */
    protected final void responded() {
        long start = starts.poll();
        listener.onComplete(this, start);
    }

    /** The stream failed: reports it once, for the oldest call in flight. */
    protected final void failed(Throwable t) {
        if (dead) {
            return;
        }
        dead = true;
        listener.onError(this, starts.peekOrNow(), t);
    }
}
