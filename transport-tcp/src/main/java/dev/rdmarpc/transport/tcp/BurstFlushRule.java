package dev.rdmarpc.transport.tcp;

/**
 * When the replies a {@link TcpFrameConnection} writes during a read burst are flushed: within a burst a flush is put
 * off to its end, so that the replies to many frames read at once leave in one write, but only so far. With many
 * calls in flight, a whole burst's replies in one write would leave the peer idle until this side answered everything,
 * and this side idle while the peer answers: one core working at a time. So every {@link #EVERY}th reply is flushed at
 * once and the peer starts on the first ones while this side makes the rest, and large replies at once when
 * {@link #LARGE_BYTES} of them wait (each one of 64 KiB or more); for an HTTP/2 client the replies wait by their bytes
 * instead ({@link #HTTP2_BYTES}). One per connection, used on its I/O thread only.
 */
final class BurstFlushRule {
    /** Replies put off together within a read burst ({@code -Drdmarpc.tcp.burstFlushEvery}). */
    static final int EVERY = Math.max(1, Integer.getInteger("rdmarpc.tcp.burstFlushEvery", 8));
    /**
     * Bytes of replies after which a flush asked for within a read burst is done at once, however few replies they are
     * ({@code -Drdmarpc.tcp.burstFlushBytes}): 64 KiB replies put off eight at a time kept the peer waiting for half a
     * megabyte (PERFORMANCE.md, "Large replies flushed one by one"). Small replies reach the count first.
     */
    static final int LARGE_BYTES = Math.max(1, Integer.getInteger("rdmarpc.tcp.burstFlushBytes", 64 * 1024));
    /**
     * On a server connection with an HTTP/2 client, the bytes of replies put off together within a read burst
     * ({@code -Drdmarpc.h2.burstFlushBytes}); the rest wait for the burst's end. A burst's small replies then leave in
     * one write, as grpc-netty's server sends them, for less of the server's CPU per call; replies of a few KiB still
     * leave every few, so that the client starts on them early.
     */
    static final int HTTP2_BYTES = Math.max(1, Integer.getInteger("rdmarpc.h2.burstFlushBytes", 32 * 1024));

    /** Whether replies wait by their bytes ({@link #HTTP2_BYTES}), not their count. */
    private boolean byBytes;
    /** Flushes asked for during this read burst since the last one done. */
    private int deferred;
    /** Bytes written since the last flush. */
    private long unflushed;
    /** A flush was put off to the burst's end. */
    private boolean pending;

    /** From now on, replies wait by their bytes: for a server connection whose client speaks HTTP/2. */
    void byBytes() {
        this.byBytes = true;
    }

    /** {@code bytes} were handed to the channel, not yet flushed. */
    void written(long bytes) {
        unflushed += bytes;
    }

    /** A flush asked for inside a read burst: whether to do it now; if not, it waits for the burst's end. */
    boolean flushDueInBurst() {
        if (byBytes ? unflushed >= HTTP2_BYTES : (++deferred >= EVERY || unflushed >= LARGE_BYTES)) {
            deferred = 0;
            return true;
        }
        pending = true;
        return false;
    }

    /** The channel was flushed: nothing waits. */
    void flushed() {
        pending = false;
        unflushed = 0;
    }

    /** A read burst starts: the count of put-off replies starts again. */
    void burstStarted() {
        deferred = 0;
    }

    /** The read burst ended: whether a flush was put off to now. */
    boolean burstEnded() {
        deferred = 0;
        return pending;
    }

    /** The channel is closed: nothing is left to flush. */
    void closed() {
        pending = false;
    }
}
