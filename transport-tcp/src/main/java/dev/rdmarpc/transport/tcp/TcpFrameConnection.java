package dev.rdmarpc.transport.tcp;


import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;

import java.io.EOFException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link FrameConnection} over one Netty channel. Sends on the channel's I/O thread are written
 * straight away; sends from other threads go to a {@link WriteQueue} and one drain task per batch
 * writes them all and flushes once. Flushes asked for while frames are being read are put off to
 * the read burst's end, as far as its {@link BurstFlushRule} lets them. Ownership of every buffer passes to Netty as a {@link SlabByteBuf},
 * which releases it exactly once (a small HEADERS frame is copied in front of a large frame sent after it:
 * {@link HeadersJoiner}).
 *
 * <p>Backpressure: the unsent bytes are Netty's outbound buffer (with TLS, what the {@code SslHandler} holds too)
 * plus the {@link WriteQueue}. The connection is not writable while they are above
 * {@link SocketOptions#HIGH_WATER_MARK} (Netty's own water marks for its buffer, and a user-defined writability
 * bit of the channel for bytes still in the queue), and the handler hears {@code onWritable} on the I/O thread
 * when they have drained, never from inside one of its own sends or flushes. Past {@link #READ_PAUSE_BOUND} this side stops reading from the peer, so a peer that
 * sends and never reads cannot make it queue more replies; reading resumes when the connection is writable again.
 * A server connection counts every unsent byte toward that bound (a client's requests, PINGs and WINDOWs all
 * make it answer). A client connection leaves out what it sent on its own account since its unsent bytes were
 * last below the low-water mark (everything but PING ACKs and WINDOW frames, the replies a server can make it
 * send): a client that paused on its own requests while the server paused on the answers would wait for each
 * other forever, as nothing stops an application from sending more than the bound before it reads. Frames already
 * read when reads pause stay buffered and are decoded when reading resumes.
 */
final class TcpFrameConnection implements FrameConnection {
    static final System.Logger LOG = System.getLogger("dev.rdmarpc.transport.tcp");

    /**
     * Largest MESSAGE payload per frame this transport asks for: the default frame limit, as over RDMA. A message up to
     * about that size travels in one frame, which the receiver takes into one buffer it may keep as the message
     * ({@link FrameDecoder}); smaller chunks would make it reassemble (copy) every message larger than a chunk.
     */
    static final int PREFERRED_CHUNK_SIZE = FrameHeader.DEFAULT_MAX_PAYLOAD;
    /**
     * Unsent outbound bytes past which this side stops reading from the peer until they drain below the low-water
     * mark: 16 times the high-water mark (4 MiB), far above what a reading peer leaves queued, so it is reached when
     * the peer reads much slower than this side answers what it reads (PING ACKs, WINDOW frames, replies). Counted
     * as Netty counts its outbound buffer: the bytes plus 96 per buffer.
     */
    static final long READ_PAUSE_BOUND = 16L * SocketOptions.HIGH_WATER_MARK;
    /** The channel's user-defined writability bit that is off while sends wait in the {@link WriteQueue}. */
    static final int QUEUE_WRITABILITY_BIT = 1;
    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    /** What Netty's outbound buffer counts per buffer on top of its bytes (its default, unless configured). */
    private static final long NETTY_ENTRY_OVERHEAD = Math.max(96, Integer.getInteger("io.netty.transport.outboundBufferEntrySizeOverhead", 96));
    static final String PEER_CLOSED = "connection closed by peer";

    private static final VarHandle CLOSING;
    private static final VarHandle DRAIN_SCHEDULED;
    private static final VarHandle QUEUED_BYTES;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CLOSING = l.findVarHandle(TcpFrameConnection.class, "closing", Closing.class);
            DRAIN_SCHEDULED = l.findVarHandle(TcpFrameConnection.class, "drainScheduled", boolean.class);
            QUEUED_BYTES = l.findVarHandle(TcpFrameConnection.class, "queuedBytes", long.class);
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
    /**
     * Spare ByteBuf wrappers for sends: a unary call sends several frames per side, each needing one, and a streaming
     * burst keeps about a hundred in flight (kept only up to the peak in flight, about 10 KiB at most).
     */
    private final SlabByteBufPool wrappers = new SlabByteBufPool(128);
    private final Runnable drainTask = this::drainFromTask;

    /** Set once, by the first close request or by the channel going away; the first reason wins. */
    private volatile Closing closing;
    /** The channel is gone: the queue has been emptied and anything sent now is released at once. */
    private volatile boolean closed;
    @SuppressWarnings("unused") // through DRAIN_SCHEDULED
    private volatile boolean drainScheduled;
    private volatile int maxInboundPayload = FrameHeader.DEFAULT_MAX_PAYLOAD;
    /** Whether the peer is a gRPC-over-HTTP/2 client whose frames an {@link H2Bridge} translates. */
    private volatile boolean http2;
    /** Bytes of the sends in {@link #queue} (counted just before they are pushed, so never too low). */
    @SuppressWarnings("unused") // through QUEUED_BYTES
    private volatile long queuedBytes;
    /** Whether {@link #QUEUE_WRITABILITY_BIT} is off now; changed only with {@link #queueBitLock} held. */
    private volatile boolean queueUnwritable;
    private final Object queueBitLock = new Object();
    /** Reads are off because too much is unsent; set and cleared on the I/O thread, read by tests. */
    private volatile boolean readsPaused;
    /** Whether every unsent byte counts toward {@link #READ_PAUSE_BOUND} (server side) or all but its own (client side). */
    private final boolean pauseOnAnyBacklog;

    /** The TLS session, set before the connection is handed to core; null for plaintext. */
    private volatile javax.net.ssl.SSLSession sslSession;

    // I/O thread only
    private FrameHandler handler;
    private FrameDecoder decoder;
    /**
     * Client side: bytes of everything but PING ACK and WINDOW frames handed to Netty since the unsent bytes were
     * last below the low mark, each buffer counted with Netty's per-buffer overhead, so never less than Netty
     * counts for them.
     */
    private long ownBytes;
    private boolean inReadBurst;
    /** The handler told that the current read burst started: the one told that it ended, even if replaced meanwhile. */
    private FrameHandler burstHandler;
    /** When replies written during a read burst are flushed. */
    private final BurstFlushRule burstFlushes = new BurstFlushRule();
    /** Hands sends to the channel, a small HEADERS frame in front of a large frame sent after it. */
    private final HeadersJoiner joiner;
    /**
     * Sends and flushes of the handler's in progress on the I/O thread. Writing can flip the channel's writability
     * (a flush that empties the outbound buffer does): the handler hears of it only after its call returned, from a
     * task of its own, as it may hold its own locks while it sends.
     */
    private int handlerCalls;
    /** The channel turned writable during one of the handler's calls: {@link #writabilityChanged} runs after it. */
    private boolean writableDeferred;

    /**
     * A connection over {@code channel}; {@code server} says whether it was accepted (every unsent byte counts
     * toward pausing reads) or dialled (only replies to the server count).
     */
    TcpFrameConnection(Channel channel, boolean server) {
        this.channel = channel;
        this.pauseOnAnyBacklog = server;
        this.loop = channel.eventLoop();
        // Fires exceptionCaught on a failed write, which is how a write error reaches onClosed.
        this.voidPromise = channel.voidPromise();
        this.joiner = new HeadersJoiner(channel, voidPromise);
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

    /** Records the decoder reading this connection's bytes; on the I/O thread. */
    void attachDecoder(FrameDecoder frameDecoder) {
        this.decoder = frameDecoder;
    }

    /** Bytes of memory held for input not yet decoded; asks the I/O thread when called on another (diagnostics, tests). */
    int bufferedInputCapacity() throws InterruptedException, java.util.concurrent.ExecutionException {
        if (loop.inEventLoop()) {
            FrameDecoder d = decoder;
            return d == null ? 0 : d.bufferedCapacity();
        }
        return loop.submit(() -> {
            FrameDecoder d = decoder;
            return d == null ? 0 : d.bufferedCapacity();
        }).get();
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
        boolean own = !pauseOnAnyBacklog && !isReply(head);
        SlabByteBuf h = wrappers.wrap(head);
        SlabByteBuf t = tail == null ? null : wrappers.wrap(tail);
        write(h, t, own, flush);
    }

    @Override
    public boolean sendsForeignMemory() {
        return true;
    }

    /**
     * Writes {@code body} from the caller's memory without a copy: a ByteBuf over its native address whose release
     * (once written, or when the write fails or the channel closes) runs {@code done}.
     */
    @Override
    public void send(SlabBuffer head, MemorySegment body, Runnable done, boolean flush) {
        write(wrappers.wrap(head), wrappers.wrapForeign(body, done), !pauseOnAnyBacklog, flush);
    }

    /** Writes (on the I/O thread) or queues one send: {@code h} then {@code t} (may be null); takes ownership of both. */
    private void write(SlabByteBuf h, SlabByteBuf t, boolean own, boolean flush) {
        if (closing != null) {
            release(h, t);
            return;
        }
        if (loop.inEventLoop()) {
            handlerCalls++;
            try {
                // Whatever other threads queued before this send goes first.
                writeQueued();
                if (own) {
                    countOwn(h, t);
                }
                burstFlushes.written(bytesOf(h, t));
                joiner.write(h, t);
                if (flush) {
                    flushOnIoThread();
                }
                pauseReadsIfBacklogged();
            } finally {
                handlerCallDone();
            }
            return;
        }
        h.tail = t;
        h.own = own;
        long size = bytesOf(h, t);
        long queued = (long) QUEUED_BYTES.getAndAdd(this, size) + size;
        queue.push(h);
        if (!queueUnwritable && queued + nettyPendingBytes() > SocketOptions.HIGH_WATER_MARK) {
            refreshQueueWritability();
        }
        // After a close the I/O thread may already have emptied the queue: let a drain free this send.
        if (flush || closed) {
            scheduleDrain();
        }
    }

    @Override
    public void flush() {
        if (loop.inEventLoop()) {
            handlerCalls++;
            try {
                writeQueued();
                flushOnIoThread();
            } finally {
                handlerCallDone();
            }
        } else {
            scheduleDrain();
        }
    }

    /**
     * On the I/O thread, as one of the handler's sends or flushes returns: a writability change it caused reaches the
     * handler from a task of its own, never from inside the call (whose caller may hold its own locks).
     */
    private void handlerCallDone() {
        if (--handlerCalls == 0 && writableDeferred) {
            writableDeferred = false;
            try {
                loop.execute(this::writabilityChanged);
            } catch (RejectedExecutionException e) {
                // the event loop is gone, and the channel with it: nobody waits to hear it is writable
            }
        }
    }

    /** The bytes of one send: {@code h} and its tail {@code t} (may be null). */
    private static long bytesOf(SlabByteBuf h, SlabByteBuf t) {
        return h.readableBytes() + (t == null ? 0L : t.readableBytes());
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
                WriteQueue.releaseAll(takeQueued());
            }
        }
    }

    /** The one task that writes a batch of queued sends and flushes them together. */
    private void drainFromTask() {
        drainScheduled = false;
        if (closed) {
            WriteQueue.releaseAll(takeQueued());
            return;
        }
        writeQueued();
        flushOnIoThread();
        pauseReadsIfBacklogged();
    }

    /** Takes every queued send and stops counting its bytes as queued (they are written or released next). */
    private SlabByteBuf takeQueued() {
        SlabByteBuf batch = queue.takeAll();
        if (batch != null) {
            QUEUED_BYTES.getAndAdd(this, -WriteQueue.bytes(batch));
        }
        return batch;
    }

    /** Writes every queued send, oldest first, each head directly followed by its tail. */
    private void writeQueued() {
        SlabByteBuf b = takeQueued();
        if (b == null) {
            return;
        }
        while (b != null) {
            SlabByteBuf next = b.next;
            SlabByteBuf t = b.tail;
            b.next = null;
            b.tail = null;
            if (b.own) {
                b.own = false;
                countOwn(b, t);
            }
            burstFlushes.written(bytesOf(b, t));
            joiner.write(b, t);
            b = next;
        }
        // The bytes are in Netty's outbound buffer now, whose own water marks take them over.
        if (queueUnwritable) {
            refreshQueueWritability();
        }
    }

    // ---- backpressure ----

    /** Bytes in Netty's outbound buffer (written or flushed, not yet on the socket); any thread. */
    private long nettyPendingBytes() {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /** Bytes sent on this connection and not yet handed to the socket: Netty's outbound buffer and the queue. */
    long unsentBytes() {
        return nettyPendingBytes() + (long) QUEUED_BYTES.getVolatile(this);
    }

    /** Whether reading from the peer is paused because too much is unsent. */
    boolean readsPaused() {
        return readsPaused;
    }

    /**
     * Turns the queue's writability bit off while queued sends take the unsent bytes past the high-water mark, and
     * on again once the queue is (nearly) empty or everything fits under the mark; any thread. Netty's own water
     * marks cover its outbound buffer, so the bit only speaks for bytes that have not reached it yet. Rechecks after
     * each change, so a send counted while the bit was being turned on again is not missed.
     * <p>
     * While the bit is off a drain is due, flushed or not: only a drain turns the bit on again, and a sender told the
     * connection is unwritable waits for {@code onWritable} rather than flush. Without it, sends queued without flush
     * while Netty's buffer was full kept the connection unwritable after that buffer had drained, until some later
     * flush (a keepalive PING, minutes later).
     */
    private void refreshQueueWritability() {
        synchronized (queueBitLock) {
            while (true) {
                ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
                if (out == null) {
                    return; // closed
                }
                long queued = (long) QUEUED_BYTES.getVolatile(this);
                boolean over = queued > 0 && queued + out.totalPendingWriteBytes() > SocketOptions.HIGH_WATER_MARK;
                if (over == queueUnwritable) {
                    break;
                }
                queueUnwritable = over;
                // Netty fires channelWritabilityChanged on the I/O thread when the channel's writability flips.
                out.setUserDefinedWritability(QUEUE_WRITABILITY_BIT, !over);
            }
        }
        if (queueUnwritable) {
            scheduleDrain();
        }
    }

    /** Client side, on the I/O thread: a send of this side's own is being handed to Netty. */
    private void countOwn(SlabByteBuf head, SlabByteBuf tail) {
        ownBytes += head.readableBytes() + NETTY_ENTRY_OVERHEAD + (tail == null ? 0L : tail.readableBytes() + NETTY_ENTRY_OVERHEAD);
    }

    /** Whether {@code head} starts with a frame that answers the peer: a PING ACK or a WINDOW. */
    private static boolean isReply(SlabBuffer head) {
        if (head.length() < FrameHeader.SIZE) {
            return false;
        }
        MemorySegment s = head.segment();
        int type = s.get(BYTE, FrameHeader.TYPE_OFFSET) & 0xff;
        return type == FrameType.WINDOW
                || type == FrameType.PING && (s.get(BYTE, FrameHeader.FLAGS_OFFSET) & FrameFlags.ACK) != 0;
    }

    /**
     * On the I/O thread, after writing: stops reading from the peer while the unsent bytes (on a client connection:
     * those beyond what it sent on its own account) are past the bound.
     */
    private void pauseReadsIfBacklogged() {
        long unsent = nettyPendingBytes();
        if (!pauseOnAnyBacklog) {
            if (unsent < SocketOptions.LOW_WATER_MARK) {
                ownBytes = 0; // the peer has read all but a little: start counting afresh
                return;
            }
            // Sends still queued are left out too: the I/O thread has not looked at them yet.
            unsent -= ownBytes;
        } else {
            unsent += (long) QUEUED_BYTES.getVolatile(this);
        }
        if (!readsPaused && unsent > READ_PAUSE_BOUND && !closed) {
            readsPaused = true;
            channel.config().setAutoRead(false);
            LOG.log(Level.DEBUG, "pausing reads from {0}: {1} bytes unsent, the peer is not reading", remote, unsentBytes());
        }
    }

    /** On the I/O thread, once the connection is writable again: decodes what was left buffered and reads again. */
    private void resumeReads() {
        if (!readsPaused) {
            return;
        }
        readsPaused = false;
        LOG.log(Level.DEBUG, "resuming reads from {0}: {1} bytes unsent", remote, unsentBytes());
        FrameDecoder d = decoder;
        if (d != null && !closed) {
            boolean burst = !inReadBurst;
            if (burst) {
                beginReadBurst();
            }
            try {
                d.decodeBuffered(channel.alloc(), handler);
            } catch (Throwable t) {
                closeOnError(t);
            } finally {
                if (burst) {
                    endReadBurst();
                }
            }
        }
        if (!readsPaused && closing == null) {
            channel.config().setAutoRead(true);
        }
    }

    private void flushOnIoThread() {
        if (!inReadBurst || burstFlushes.flushDueInBurst()) {
            flushNow();
        }
    }

    /** Flushes what was written; on the I/O thread. */
    private void flushNow() {
        burstFlushes.flushed();
        joiner.writeHeld();
        channel.flush();
    }

    /**
     * Receives a whole frame an HTTP/2 bridge made for core from what its peer sent, taking the caller's reference: to
     * the handler at once when nothing received waits before it, else into the decoder behind what waits (from a task
     * when the decoder is handing frames out). Opens a read burst if none is open (the bridge ends it), without
     * restarting the count of replies whose flush waits for its end: a client's call arrives as several made frames, and
     * restarting at each would put every reply of a burst off to its end (see {@link BurstFlushRule}). On the I/O
     * thread, never from inside the handler's sends or flushes.
     */
    void receiveMade(SlabBuffer frame) {
        FrameDecoder d = decoder;
        if (d != null && closing == null && !d.handingOut()) {
            openReadBurst();
            try {
                if (d.deliverNow(channel.alloc(), frame, handler)) {
                    return;
                }
            } catch (Throwable t) {
                closeOnError(t);
                return;
            }
        }
        receiveMade(wrappers.wrap(frame)); // dropped, deferred or queued behind what waits, as a Netty buffer
    }

    /** {@link #receiveMade(SlabBuffer)} for a frame in a Netty buffer (the handler gets a view of its payload). */
    void receiveMade(ByteBuf frame) {
        FrameDecoder d = decoder;
        if (d == null || closing != null) {
            frame.release();
            return;
        }
        if (d.handingOut()) {
            receiveMadeLater(() -> receiveMade(frame), frame::release);
            return;
        }
        openReadBurst();
        try {
            if (!d.deliverNow(channel.alloc(), frame, handler)) {
                d.decode(channel.alloc(), frame, handler);
            }
        } catch (Throwable t) {
            closeOnError(t);
        }
    }

    /**
     * A frame made from inside the handler's own {@code onFrame} (the decoder is handing frames out): received from a
     * task, after the frames being handed out, in a read burst of its own unless one is open; {@code drop} frees it
     * if the task cannot run.
     */
    private void receiveMadeLater(Runnable receive, Runnable drop) {
        try {
            loop.execute(() -> {
                boolean burst = !inReadBurst;
                receive.run();
                if (burst && inReadBurst) {
                    endReadBurst();
                }
            });
        } catch (RejectedExecutionException e) {
            drop.run(); // the event loop is gone, and the channel with it
        }
    }

    /** Frames are about to be read; flushes wait for {@link #endReadBurst()}, or for enough of them to pile up. */
    void beginReadBurst() {
        burstFlushes.burstStarted();
        openReadBurst();
    }

    /** Opens a read burst unless one is open; the count of replies whose flush waits for its end goes on. */
    private void openReadBurst() {
        if (!inReadBurst) {
            inReadBurst = true;
            FrameHandler h = handler;
            if (h != null) {
                burstHandler = h;
                h.onReadBurstStart();
            }
        }
    }

    /** The read burst is over: one flush for every reply sent during it; the handler hears the burst ended. */
    void endReadBurst() {
        inReadBurst = false;
        try {
            if (burstFlushes.burstEnded()) {
                flushNow();
            }
        } finally {
            FrameHandler h = burstHandler; // set only while a burst the handler heard start is open
            if (h != null) {
                burstHandler = null;
                h.onReadBurstEnd();
            }
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
        return http2 ? "h2" : "tcp";
    }

    /**
     * Marks this connection as carrying gRPC over HTTP/2, translated by an {@link H2Bridge} (a client's) or an
     * {@link H2ClientBridge} (to a server); on the I/O thread, before its HELLO.
     */
    void servesHttp2() {
        this.http2 = true;
        joiner.disable();
    }

    /**
     * Puts off the replies within a read burst by their bytes ({@link BurstFlushRule#HTTP2_BYTES}) instead of their count;
     * for a server connection whose client speaks HTTP/2, on the I/O thread.
     */
    void flushBurstsByBytes() {
        burstFlushes.byBytes();
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

    /**
     * Records why the channel is about to close, for core, when another handler closes it (the HTTP/2 codec, after
     * the GOAWAY that names a client's protocol error); logged here like {@link #closeOnError}.
     */
    void closingOnError(Throwable error) {
        String reason = error.getMessage() != null ? error.getMessage() : error.toString();
        if (CLOSING.compareAndSet(this, null, new Closing(reason, error, false))) {
            LOG.log(Level.WARNING, "closing connection with {0}: {1}", remote, reason);
        }
    }

    /** Closes a client connection whose server speaks another protocol; core dials it again in that one (logged at DEBUG). */
    void closeToSwitchProtocol(dev.rdmarpc.core.spi.ProtocolSwitchException why) {
        LOG.log(Level.DEBUG, "closing connection with {0}: {1}", remote, why.getMessage());
        closeWith(why.getMessage(), why, false);
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
            flushNow();
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
        burstFlushes.closed();
        joiner.releaseHeld();
        WriteQueue.releaseAll(takeQueued());
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

    /** The channel's writability flipped (its outbound buffer or the queue crossed a water mark); on the I/O thread. */
    void writabilityChanged() {
        if (handlerCalls > 0) {
            writableDeferred = true; // the handler is inside send or flush: it hears of this once that returned
            return;
        }
        FrameHandler h = handler;
        if (h != null && !closed && channel.isWritable()) {
            resumeReads();
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
