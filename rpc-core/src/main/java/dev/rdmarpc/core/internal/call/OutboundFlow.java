package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.attachment.Attachments;
import dev.rdmarpc.core.internal.attachment.OutgoingAttachment;
import dev.rdmarpc.core.internal.flow.ConnectionSendWindow;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameConnection;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * One stream's send side: sends framed messages within the peer's window, splitting those larger
 * than a chunk or than the window into several MESSAGE frames, and queues what cannot go yet
 * (with any control frame that must follow it, such as TRAILERS) until WINDOW frames arrive or, while
 * the connection is not writable (its transport holds more than its high-water mark), until the
 * connection drains: a stream starts no new message on a connection that cannot take more (one
 * already begun goes on within its window, the connection's streams together up to
 * {@link ConnectionSendWindow#OVERFLOW_LIMIT} past the mark). A message also takes its whole charge from the peer's connection window
 * before its first frame goes out ({@link ConnectionSendWindow}), and waits for a connection WINDOW when that has not
 * enough left. A message that fits goes out with no allocation. Not thread-safe: the owning stream locks.
 */
final class OutboundFlow {
    /** Queued bytes below which the stream counts as ready for more. */
    static final int READY_LIMIT = 64 * 1024;
    /** Queued bytes past which a sending thread (not an I/O thread) waits for the peer to read. */
    static final long BLOCK_LIMIT = 1 << 20;

    private static final class Pending {
        final SlabBuffer buf;
        final boolean control;
        final boolean endStream;
        final boolean flush;
        final OutgoingAttachment attachment;
        boolean begun;
        int sent;

        Pending(SlabBuffer buf, boolean control, boolean endStream, boolean flush) {
            this(buf, null, control, endStream, flush);
        }

        Pending(SlabBuffer buf, OutgoingAttachment attachment, boolean control, boolean endStream, boolean flush) {
            this.buf = buf;
            this.attachment = attachment;
            this.control = control;
            this.endStream = endStream;
            this.flush = flush;
        }
    }

    private final SlabPool pool;
    /** What waits to be sent; created when something first has to wait (a unary call never queues). */
    private ArrayDeque<Pending> queue;
    private FrameConnection conn;
    /** The connection's shared send side; null until bound. */
    private ConnectionSendWindow shared;
    private int streamId;
    private int window;
    private int maxChunk;
    private long queuedBytes;
    private int waiters;
    /** Run (under the owning stream's lock) when an attachment cannot be sent: its owner closed it, or the transport refused it. */
    private java.util.function.Consumer<Status> attachmentFailed;
    private Status attachmentFailure;

    OutboundFlow(SlabPool pool) {
        this.pool = pool;
    }

    /**
     * Binds to the connection and stream once the stream is open, sharing the connection's send side
     * {@code sendWindow}, then sends what was queued.
     */
    void bind(FrameConnection connection, ConnectionSendWindow sendWindow, int id, int initialWindow, int chunk) {
        this.conn = connection;
        this.shared = sendWindow;
        sendWindow.addQueued(queuedBytes);
        this.streamId = id;
        this.window = initialWindow;
        this.maxChunk = Math.max(64, chunk);
        drain();
    }

    boolean isBound() {
        return conn != null;
    }

    /**
     * Sets what runs, under the owning stream's lock, when an attachment cannot be sent (its segment found closed, or
     * the transport refusing its memory), with the status the call should end with; everything queued is dropped.
     */
    void onAttachmentFailed(java.util.function.Consumer<Status> hook) {
        this.attachmentFailed = hook;
    }

    /**
     * Sends (or queues) a framed message and takes ownership: a buffer from {@link MessageFramer#frame} with a null
     * {@code attachment}, sent at once when it fits the windows; or one from {@link MessageFramer#frameWithAttachment}
     * followed by the attachment's bytes, in MESSAGE frames of their own sent from the attachment's memory. One method
     * for both, so that a plain message costs no forwarding call (PERFORMANCE.md, "Inlining depth").
     */
    void message(SlabBuffer framed, OutgoingAttachment attachment, boolean endStream, boolean flush) {
        if (attachment != null) {
            queue().add(new Pending(framed, attachment, false, endStream, flush));
            addQueued(framed.length() - FrameHeader.SIZE + (long) attachment.size());
            drain();
            return;
        }
        int payload = framed.length() - FrameHeader.SIZE;
        if (conn != null && isEmpty() && payload <= window && payload <= maxChunk && conn.isWritable()
                && shared.tryTake(payload, payload)) {
            MessageFramer.writeHeader(framed.segment(), 0, payload,
                    MessageFramer.flags(true, true, endStream) | MessageFramer.compressedFlag(framed), streamId);
            window -= payload;
            conn.send(framed, null, flush);
            return;
        }
        queue().add(new Pending(framed, false, endStream, flush));
        addQueued(payload);
        drain();
    }

    /** Sends (or queues behind pending messages) a whole control frame; takes ownership. */
    void control(SlabBuffer frame, boolean flush) {
        if (conn != null && isEmpty()) {
            conn.send(frame, null, flush);
            return;
        }
        queue().add(new Pending(frame, true, false, flush));
        drain();
    }

    /**
     * The peer granted more window. An increment that is not positive, or that takes the window past 2^31-1, is a
     * protocol error (as in HTTP/2): the caller lets it close the connection.
     */
    void onWindow(int increment) {
        if (increment <= 0) {
            throw new ProtocolException("WINDOW increment " + increment + " on stream " + streamId + " is not positive");
        }
        if ((long) window + increment > Integer.MAX_VALUE) {
            throw new ProtocolException("WINDOW increment " + increment + " on stream " + streamId
                    + " takes the send window past 2^31-1 (it was " + window + ")");
        }
        window += increment;
        drain();
    }

    /** The connection can take more again: sends what waited for it. */
    void onConnectionWritable() {
        drain();
    }

    private ArrayDeque<Pending> queue() {
        if (queue == null) {
            queue = new ArrayDeque<>(2);
        }
        return queue;
    }

    private void drain() {
        if (conn == null || queue == null) {
            return;
        }
        if (drainUntilBlocked()) {
            conn.flush();
        }
        Status failure = attachmentFailure;
        if (failure != null) {
            attachmentFailure = null;
            if (attachmentFailed != null) {
                attachmentFailed.accept(failure);
            }
        }
    }

    /**
     * Sends what the window and the connection allow; returns true if frames may have been left unflushed because
     * the window ran out or the connection is full.
     */
    private boolean drainUntilBlocked() {
        boolean unflushed = false;
        Pending p;
        while ((p = queue.peek()) != null) {
            if (p.control) {
                queue.poll();
                conn.send(p.buf, null, p.flush);
                continue;
            }
            if (!p.begun && !conn.isWritable()) {
                // a new message waits for the connection to drain (resumed by onConnectionWritable); one already
                // begun goes on within its window, so a large message is not cut into stop-and-go bursts. Flush
                // what is there, or the transport may never drain.
                return true;
            }
            int dataLen = p.buf.length() - MessageFramer.PREFIX;
            OutgoingAttachment att = p.attachment;
            int attLeft = att == null ? 0 : att.remaining();
            if (!p.begun) {
                // first frame: header + length prefix (+ attachment length) + as much data as fits
                int want = 4 + dataLen;
                int room = Math.min(window, maxChunk);
                if (room < (att == null ? 4 + Math.min(1, dataLen) : 8)) {
                    return unflushed;
                }
                int payload = Math.min(want, room);
                if (att == null && want > maxChunk && dataLen <= maxChunk && window >= want) {
                    // the body fits one frame but not with its prefix: the prefix goes alone, so the body arrives
                    // whole in one frame that the receiver can keep without copying
                    payload = 4;
                }
                if (!shared.tryTake(4L + dataLen + attLeft, payload)) {
                    return unflushed; // resumed by the peer's connection WINDOW (onConnectionWritable)
                }
                int data = payload - 4;
                boolean last = data == dataLen && attLeft == 0;
                MessageFramer.writeHeader(p.buf.segment(), 0, payload,
                        MessageFramer.flags(true, last, last && p.endStream) | MessageFramer.compressedFlag(p.buf), streamId);
                window -= payload;
                addQueued(-payload);
                if (last) {
                    queue.poll();
                    conn.send(p.buf, null, p.flush || queue.isEmpty());
                    if (att != null) {
                        att.release();
                    }
                    continue;
                }
                p.begun = true;
                p.sent = data;
                conn.send(p.buf.retainedSlice(0, MessageFramer.PREFIX + data), null, false);
                unflushed = true;
                continue;
            }
            int remaining = dataLen - p.sent;
            if (remaining == 0) {
                int sent = sendAttachmentChunk(p);
                if (sent < 0) {
                    return unflushed;
                }
                unflushed = sent == 0;
                continue;
            }
            int payload = Math.min(remaining, Math.min(window, maxChunk));
            if (payload <= 0) {
                return unflushed;
            }
            if (!conn.isWritable() && !shared.tryOverflow(payload)) {
                return true; // resumed once the transport drains (onConnectionWritable)
            }
            boolean last = payload == remaining && attLeft == 0;
            SlabBuffer head = pool.allocate(FrameHeader.SIZE);
            MessageFramer.writeHeader(head.segment(), 0, payload, MessageFramer.flags(false, last, last && p.endStream), streamId);
            head.setLength(FrameHeader.SIZE);
            SlabBuffer tail = p.buf.retainedSlice(MessageFramer.PREFIX + p.sent, payload);
            window -= payload;
            addQueued(-payload);
            p.sent += payload;
            if (last) {
                queue.poll();
                p.buf.release();
                if (att != null) {
                    att.release();
                }
            }
            boolean flushNow = last && (p.flush || queue.isEmpty());
            conn.send(head, tail, flushNow);
            unflushed = !flushNow;
        }
        return false;
    }

    /**
     * Sends the next chunk of the attachment of the message at the head of the queue (whose own bytes are all sent), as
     * a MESSAGE continuation read from the attachment's memory; when it is the last, the message leaves the queue and
     * leaves the queue. Returns -1 when the window has no room, 1 when the chunk was sent and flushed, 0 when sent
     * without flush. A segment its owner closed drops everything queued and flags the failure for {@link #drain}.
     */
    private int sendAttachmentChunk(Pending p) {
        OutgoingAttachment att = p.attachment;
        int attLeft = att.remaining();
        int payload = Math.min(attLeft, Math.min(window, maxChunk));
        if (payload <= 0) {
            return -1;
        }
        if (!conn.isWritable() && !shared.tryOverflow(payload)) {
            return -1; // resumed once the transport drains (onConnectionWritable)
        }
        if (!att.isAlive()) {
            discard();
            attachmentFailure = Attachments.CLOSED_WHILE_SENDING;
            return 1;
        }
        boolean last = payload == attLeft;
        SlabBuffer head = pool.allocate(FrameHeader.SIZE);
        MessageFramer.writeHeader(head.segment(), 0, payload, MessageFramer.flags(false, last, last && p.endStream), streamId);
        head.setLength(FrameHeader.SIZE);
        MemorySegment body = att.segment().asSlice(att.sent, payload);
        att.sent += payload;
        window -= payload;
        addQueued(-payload);
        if (last) {
            queue.poll();
            p.buf.release();
        }
        boolean flushNow = last && (p.flush || queue.isEmpty());
        if (conn.sendsForeignMemory() && body.isNative()) {
            try {
                conn.send(head, body, att.retain().releaser(), flushNow);
            } catch (RuntimeException e) {
                // the transport could not use the memory (e.g. registering it hit RLIMIT_MEMLOCK): this call fails,
                // the connection carries on
                if (last) {
                    att.release(); // the stream's reference: the message already left the queue
                }
                discard();
                attachmentFailure = Status.RESOURCE_EXHAUSTED.withDescription("the attachment could not be sent: "
                        + e.getMessage());
                return 1;
            }
        } else {
            SlabBuffer frame = pool.allocate(FrameHeader.SIZE + payload);
            MemorySegment.copy(head.segment(), 0, frame.segment(), 0, FrameHeader.SIZE);
            MemorySegment.copy(body, 0, frame.segment(), FrameHeader.SIZE, payload);
            frame.setLength(FrameHeader.SIZE + payload);
            head.release();
            conn.send(frame, null, flushNow);
        }
        if (last) {
            att.release();
        }
        return flushNow ? 1 : 0;
    }

    /**
     * With the owning stream's monitor held: waits on it while more than {@link #BLOCK_LIMIT} would
     * be queued, so a fast sender's buffered bytes stay bounded. Never waits on an I/O thread (it
     * would stop the reads that bring credit); one message is always accepted when nothing is queued.
     */
    void awaitRoom(Object monitor, int size, java.util.function.BooleanSupplier ended) {
        boolean interrupted = false;
        while (!ended.getAsBoolean() && mustAwaitRoom(size) && (conn == null || !conn.inIoThread())) {
            waiters++;
            try {
                monitor.wait(100);
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            } finally {
                waiters--;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * With the owning stream's monitor held: waits as {@link #awaitRoom} does, then takes room for {@code size} bytes
     * on the connection ({@link ConnectionSendWindow#tryReserve}) in the same step as the check, so that handlers
     * serializing responses at the same moment cannot all pass it. True when room was taken: the caller gives it back
     * with {@link #unreserve} once the message is queued. False when the call ended, on an I/O thread (which never
     * waits) or without a connection-wide limit.
     */
    boolean awaitRoomAndReserve(Object monitor, int size, java.util.function.BooleanSupplier ended) {
        boolean interrupted = false;
        try {
            while (!ended.getAsBoolean()) {
                boolean streamFull = queuedBytes > 0 && queuedBytes + size > BLOCK_LIMIT;
                if (!streamFull && (shared == null || shared.tryReserve(size))) {
                    return shared != null;
                }
                if (conn == null || conn.inIoThread()) {
                    return false;
                }
                waiters++;
                try {
                    monitor.wait(100);
                } catch (InterruptedException e) {
                    interrupted = true;
                    return false;
                } finally {
                    waiters--;
                }
            }
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Gives back room taken by {@link #awaitRoomAndReserve}. */
    void unreserve(int size) {
        if (shared != null) {
            shared.unreserve(size);
        }
    }

    /** With the owning stream's monitor held: wakes senders waiting in {@link #awaitRoom}. */
    void wakeWaiters(Object monitor) {
        if (waiters > 0) {
            monitor.notifyAll();
        }
    }

    /** True while a message can be sent without queueing much past the window or into a connection that is full. */
    boolean isReady() {
        return conn != null && window > 0 && queuedBytes < READY_LIMIT && conn.isWritable();
    }

    /** Bytes of message payload queued and not yet sent. */
    long queuedBytes() {
        return queuedBytes;
    }

    /** True when nothing is waiting to be sent. */
    boolean isEmpty() {
        return queue == null || queue.isEmpty();
    }

    /**
     * True when a sender would have to wait in {@link #awaitRoom} before queueing {@code size} more bytes: past
     * {@link #BLOCK_LIMIT} on this stream, or past {@link ConnectionSendWindow#QUEUE_LIMIT} on its connection.
     */
    boolean mustAwaitRoom(int size) {
        return (queuedBytes > 0 && queuedBytes + size > BLOCK_LIMIT) || (shared != null && shared.mustWait(size));
    }

    /** Adds {@code bytes} (negative: removes) to what this stream and its connection have queued. */
    private void addQueued(long bytes) {
        queuedBytes += bytes;
        if (shared != null) {
            shared.addQueued(bytes);
        }
    }

    /** True when no sender waits in {@link #awaitRoom} and nothing is queued: the flow can serve another stream. */
    boolean isIdle() {
        return waiters == 0 && isEmpty();
    }

    /** Unbinds an idle flow (see {@link #isIdle}) so that another stream can take it from {@link StreamParts}. */
    void reset() {
        discard();
        conn = null;
        shared = null;
        streamId = 0;
        window = 0;
        maxChunk = 0;
        attachmentFailure = null;
        attachmentFailed = null;
    }

    /** Drops and frees everything queued (the stream ended). */
    void discard() {
        Pending p;
        while (queue != null && (p = queue.poll()) != null) {
            p.buf.release();
            if (p.attachment != null) {
                p.attachment.release();
            }
        }
        addQueued(-queuedBytes);
    }
}
