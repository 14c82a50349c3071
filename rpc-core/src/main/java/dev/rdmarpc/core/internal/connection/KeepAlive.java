package dev.rdmarpc.core.internal.connection;

import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.metrics.CallMetrics;

import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keepalive of one connection, server's or client's: when nothing has arrived from the peer for {@code timeNanos}, it gets a PING;
 * when nothing (the ACK or any other frame) arrives within {@code timeoutNanos} after that, the connection is closed
 * ("keepalive: no frames for ..."), which fails its calls (a client's with UNAVAILABLE). A peer that answers PINGs keeps
 * its connection however long it stays idle.
 *
 * <p>One timer task per connection, never rescheduled per frame: the connection counts the frames it reads
 * ({@link Connection#framesReceived()}) and the timer, ticking every quarter of {@code timeNanos}, only looks at
 * whether the count moved. The PING therefore goes out between {@code timeNanos} and 1.25 × {@code timeNanos} after
 * the last frame.
 */
public final class KeepAlive {
    private final Connection conn;
    private final long timeNanos;
    private final long timeoutNanos;
    private final long tickNanos;
    private final CallMetrics metrics;
    /** Guarded by this. */
    private ScheduledFuture<?> timer;
    private boolean stopped;
    /** The frame count at the last tick, and when the count was last seen to move. */
    private int seenFrames;
    private long quietSince;

    public KeepAlive(Connection conn, long timeNanos, long timeoutNanos, CallMetrics metrics) {
        this.conn = conn;
        this.timeNanos = timeNanos;
        this.timeoutNanos = timeoutNanos;
        this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), timeNanos / 4);
        this.metrics = metrics;
    }

    /** Starts watching (after the HELLO exchange). */
    public synchronized void start() {
        if (stopped) {
            return;
        }
        seenFrames = conn.framesReceived();
        quietSince = System.nanoTime();
        schedule(this::tick, tickNanos);
    }

    /** Stops for good (the connection closed). */
    public synchronized void stop() {
        stopped = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void schedule(Runnable task, long delayNanos) {
        timer = RpcExecutors.timer().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void tick() {
        long now = System.nanoTime();
        synchronized (this) {
            if (stopped) {
                return;
            }
            int frames = conn.framesReceived();
            if (frames != seenFrames) {
                seenFrames = frames;
                quietSince = now;
            }
            if (now - quietSince < timeNanos) {
                schedule(this::tick, tickNanos);
                return;
            }
            schedule(() -> checkAnswer(frames, now), timeoutNanos);
        }
        metrics.keepAlivePingSent();
        conn.ping().whenComplete((rtt, error) -> {
            if (error == null) {
                metrics.keepAlivePingAcknowledged();
            }
        });
    }

    /** {@code timeoutNanos} after the PING: anything received since then keeps the connection. */
    private void checkAnswer(int framesAtPing, long pingNanos) {
        long now = System.nanoTime();
        String reason;
        synchronized (this) {
            if (stopped) {
                return;
            }
            int frames = conn.framesReceived();
            if (frames != framesAtPing) {
                seenFrames = frames;
                quietSince = now;
                schedule(this::tick, tickNanos);
                return;
            }
            stopped = true;
            timer = null;
            reason = "keepalive: no frames for " + TimeUnit.NANOSECONDS.toMillis(now - quietSince) + " ms (a PING sent after "
                    + TimeUnit.NANOSECONDS.toMillis(pingNanos - quietSince) + " ms of silence was not answered within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms)";
        }
        Connection.LOG.log(Level.INFO, "closing connection with {0}: {1}", conn.peer(), reason);
        metrics.connectionClosedByKeepAlive();
        conn.close(reason);
    }
}
