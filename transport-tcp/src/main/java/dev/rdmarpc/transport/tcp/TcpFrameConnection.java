package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;

import java.io.EOFException;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link FrameConnection} over one Netty channel. Sends on the channel's I/O thread are written
 * straight away; sends from other threads go to a {@link WriteQueue} and one drain task per batch
 * writes them all and flushes once. Flushes asked for while frames are being read are done once,
 * when the read burst ends. Ownership of every buffer passes to Netty as a {@link SlabByteBuf},
 * which releases it exactly once.
 */
final class TcpFrameConnection implements FrameConnection {
    static final System.Logger LOG = System.getLogger("dev.rdmarpc.transport.tcp");

    /** Largest MESSAGE payload per frame this transport asks for. */
    static final int PREFERRED_CHUNK_SIZE = 256 * 1024;
    static final String PEER_CLOSED = "connection closed by peer";

    private static final VarHandle CLOSING;
    private static final VarHandle DRAIN_SCHEDULED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CLOSING = l.findVarHandle(TcpFrameConnection.class, "closing", Closing.class);
            DRAIN_SCHEDULED = l.findVarHandle(TcpFrameConnection.class, "drainScheduled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Why the connection closes; {@code ioError} says whether a half-read frame is worth naming too. */
    private record Closing(String reason, Throwable cause, boolean ioError) {
    }

    private final Channel channel;
    private final EventLoop loop;
    private final ChannelPromise voidPromise;
    private final SocketAddress remote;
    private final SocketAddress local;
    private final WriteQueue queue = new WriteQueue();
    /** Spare ByteBuf wrappers for sends: a unary call sends several frames per side, each needing one. */
    private final SlabByteBufPool wrappers = new SlabByteBufPool(64);
    private final Runnable drainTask = this::drainFromTask;

    /** Set once, by the first close request or by the channel going away; the first reason wins. */
    private volatile Closing closing;
    /** The channel is gone: the queue has been emptied and anything sent now is released at once. */
    private volatile boolean closed;
    @SuppressWarnings("unused") // through DRAIN_SCHEDULED
    private volatile boolean drainScheduled;
    private volatile int maxInboundPayload = FrameHeader.DEFAULT_MAX_PAYLOAD;

    /** The TLS session, set before the connection is handed to core; null for plaintext. */
    private volatile javax.net.ssl.SSLSession sslSession;

    // I/O thread only
    private FrameHandler handler;
    private boolean inReadBurst;
    private boolean flushAfterRead;

    TcpFrameConnection(Channel channel) {
        this.channel = channel;
        this.loop = channel.eventLoop();
        // Fires exceptionCaught on a failed write, which is how a write error reaches onClosed.
        this.voidPromise = channel.voidPromise();
        this.remote = channel.remoteAddress();
        this.local = channel.localAddress();
    }

    /** Binds core's handler; on the I/O thread, before the first read. */
    void bind(FrameHandler frameHandler) {
        this.handler = frameHandler;
    }

    FrameHandler handler() {
        return handler;
    }

    /** Records the TLS session whose handshake completed; on the I/O thread, before {@link #bind}. */
    void secure(javax.net.ssl.SSLSession session) {
        this.sslSession = session;
    }

    @Override
    public javax.net.ssl.SSLSession sslSession() {
        return sslSession;
    }

    // ---- send path ----

    @Override
    public void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
        if (head == null) {
            if (tail != null) {
                tail.release();
            }
            throw new NullPointerException("head");
        }
        SlabByteBuf h = wrappers.wrap(head);
        SlabByteBuf t = tail == null ? null : wrappers.wrap(tail);
        if (closing != null) {
            release(h, t);
            return;
        }
        if (loop.inEventLoop()) {
            // Whatever other threads queued before this send goes first.
            writeQueued();
            channel.write(h, voidPromise);
            if (t != null) {
                channel.write(t, voidPromise);
            }
            if (flush) {
                flushOnIoThread();
            }
            return;
        }
        h.tail = t;
        queue.push(h);
        // After a close the I/O thread may already have emptied the queue: let a drain free this send.
        if (flush || closed) {
            scheduleDrain();
        }
    }

    @Override
    public void flush() {
        if (loop.inEventLoop()) {
            writeQueued();
            flushOnIoThread();
        } else {
            scheduleDrain();
        }
    }

    private static void release(SlabByteBuf h, SlabByteBuf t) {
        h.release();
        if (t != null) {
            t.release();
        }
    }

    private void scheduleDrain() {
        if (!drainScheduled && DRAIN_SCHEDULED.compareAndSet(this, false, true)) {
            try {
                loop.execute(drainTask);
            } catch (RejectedExecutionException e) {
                // The event loop is gone, and the channel with it.
                drainScheduled = false;
                WriteQueue.releaseAll(queue.takeAll());
            }
        }
    }

    /** The one task that writes a batch of queued sends and flushes them together. */
    private void drainFromTask() {
        drainScheduled = false;
        if (closed) {
            WriteQueue.releaseAll(queue.takeAll());
            return;
        }
        writeQueued();
        flushOnIoThread();
    }

    /** Writes every queued send, oldest first, each head directly followed by its tail. */
    private void writeQueued() {
        SlabByteBuf b = queue.takeAll();
        while (b != null) {
            SlabByteBuf next = b.next;
            SlabByteBuf t = b.tail;
            b.next = null;
            b.tail = null;
            channel.write(b, voidPromise);
            if (t != null) {
                channel.write(t, voidPromise);
            }
            b = next;
        }
    }

    private void flushOnIoThread() {
        if (inReadBurst) {
            flushAfterRead = true;
        } else {
            channel.flush();
        }
    }

    /** Frames are about to be read; flushes wait for {@link #endReadBurst()}. */
    void beginReadBurst() {
        inReadBurst = true;
    }

    /** The read burst is over: one flush for every reply sent during it. */
    void endReadBurst() {
        inReadBurst = false;
        if (flushAfterRead) {
            flushAfterRead = false;
            channel.flush();
        }
    }

    // ---- state ----

    @Override
    public boolean isWritable() {
        return channel.isWritable();
    }

    @Override
    public void setMaxInboundPayload(int maxPayload) {
        if (maxPayload < 0) {
            throw new IllegalArgumentException("negative maximum payload " + maxPayload);
        }
        this.maxInboundPayload = Math.min(maxPayload, FrameHeader.MAX_PAYLOAD_LIMIT);
    }

    int maxInboundPayload() {
        return maxInboundPayload;
    }

    @Override
    public int preferredChunkSize() {
        return PREFERRED_CHUNK_SIZE;
    }

    @Override
    public boolean isOpen() {
        return closing == null && channel.isActive();
    }

    /** Whether a close was asked for or happened; no more frames are delivered then. */
    boolean isClosing() {
        return closing != null;
    }

    @Override
    public boolean inIoThread() {
        return loop.inEventLoop();
    }

    @Override
    public SocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public SocketAddress localAddress() {
        return local;
    }

    @Override
    public String transportName() {
        return "tcp";
    }

    // ---- closing ----

    @Override
    public void close(String reason) {
        closeWith(reason == null ? "closed" : reason, null, false);
    }

    /** Closes because a frame was bad or the handler threw; logged here, the reason reaches onClosed. */
    void closeOnError(Throwable error) {
        String reason = error.getMessage() != null ? error.getMessage() : error.toString();
        if (error instanceof ProtocolException) {
            LOG.log(Level.WARNING, "closing connection with {0}: {1}", remote, reason);
        } else {
            LOG.log(Level.WARNING, "closing connection with " + remote + ": frame handling failed: " + reason, error);
        }
        closeWith(reason, error, false);
    }

    /** Closes because reading or writing the socket failed. */
    void closeOnIoError(Throwable error) {
        String detail = error.getMessage() != null ? error.getMessage() : error.toString();
        LOG.log(Level.DEBUG, "I/O error on connection with {0}: {1}", remote, detail);
        closeWith("I/O error: " + detail, error, true);
    }

    private void closeWith(String reason, Throwable cause, boolean ioError) {
        if (!CLOSING.compareAndSet(this, null, new Closing(reason, cause, ioError))) {
            return;
        }
        if (loop.inEventLoop()) {
            closeNow(!ioError);
        } else {
            try {
                loop.execute(() -> closeNow(!ioError));
            } catch (RejectedExecutionException e) {
                channel.close();
            }
        }
    }

    /** Pushes out what was sent before the close (unless the socket failed), then closes the channel. */
    private void closeNow(boolean flushFirst) {
        if (flushFirst && !closed) {
            writeQueued();
            flushAfterRead = false;
            channel.flush();
        }
        channel.close();
    }

    /**
     * The channel is closed (on the I/O thread, once): frees what is queued and tells the handler why.
     *
     * @param truncation the decoder's note of a half-read frame, or null
     */
    void channelClosed(String truncation) {
        closed = true;
        inReadBurst = false;
        flushAfterRead = false;
        WriteQueue.releaseAll(queue.takeAll());
        Closing c = closing;
        if (c == null) {
            String r = truncation == null ? PEER_CLOSED : PEER_CLOSED + ": " + truncation;
            Closing byPeer = new Closing(r, truncation == null ? null : new EOFException(r), false);
            c = CLOSING.compareAndSet(this, null, byPeer) ? byPeer : closing;
        }
        String reason = c.ioError() && truncation != null ? c.reason() + "; " + truncation : c.reason();
        Throwable cause = c.cause();
        FrameHandler h = handler;
        if (h != null) {
            try {
                h.onClosed(reason, cause);
            } catch (Throwable t) {
                LOG.log(Level.WARNING, "frame handler of " + remote + " failed in onClosed", t);
            }
        }
    }

    /** The outbound buffer went below its low-water mark. */
    void writabilityChanged() {
        FrameHandler h = handler;
        if (h != null && !closed && channel.isWritable()) {
            try {
                h.onWritable();
            } catch (Throwable t) {
                LOG.log(Level.WARNING, "frame handler of " + remote + " failed in onWritable", t);
            }
        }
    }

    @Override
    public String toString() {
        return "TcpFrameConnection{" + local + " -> " + remote + (closing != null ? ", closing" : "") + "}";
    }
}
