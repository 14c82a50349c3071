package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.transport.rdma.RendezvousGrants.Grant;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.QueuePair;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection's send queue. Frames core sends are copied into a staging buffer of the peer's receive-buffer size
 * (so several small frames share one SEND); a frame too large for a receive buffer is replaced by an RTS naming a
 * rendezvous grant. A staging buffer is posted on flush or when full: inline when it fits the QP's
 * {@code max_inline_data}, else as an eager SEND from its registered slab. Every SEND spends one of the peer's
 * receive credits and carries the credits this side owes in its first frame header (or in an appended credit
 * frame); the last credit is kept for a SEND that returns credits, so two peers never wait on each other. What
 * cannot be posted (no credit, send queue full) waits in order. Also posts the RDMA READs, BIND_MW and LOCAL_INV of
 * rendezvous. Every send-queue slot remembers what to release when its completion (or a later one) arrives.
 * Where the device replays local work requests on a retry (Soft-RoCE), a BIND_MW or LOCAL_INV waits until the send
 * queue is empty and every work request is signaled, so the queue's state is always known; see
 * {@link RdmaDeviceContext#localOpsNeedEmptySendQueue()}.
 * All state is guarded by {@link #lock}.
 */
final class SendPath {
    static final byte NONE = 0;
    static final byte INLINE = 1;
    static final byte SEND = 2;
    static final byte READ = 3;
    static final byte BIND = 4;
    static final byte INVALIDATE = 5;
    static final byte DRAIN = 6;

    /** {@link #onCompletion} result bit: an RDMA READ finished (frames may be deliverable). */
    static final int READ_DONE = 1;
    /** {@link #onCompletion} result bit: the drain marker completed (teardown may finish). */
    static final int DRAINED = 2;

    final ReentrantLock lock = new ReentrantLock();
    private final RdmaEndpoint endpoint;
    private final QueuePair qp;
    private final SlabPool pool;
    private final RendezvousGrants grants;
    private final long wrIdBase;
    private final int maxInline;
    private final int stagingSize;
    private final int stagingLimit;
    private final int peerCredits;
    private final int creditThreshold;
    private final int readChunk;
    private final int sqDepth;
    private final int sqMask;
    private final int signalEvery;
    private final boolean localOpsNeedEmptyQueue;
    private final Object[] slotRef;
    private final byte[] slotKind;
    private final SendWorkRequest wr;
    private final ArrayDeque<Object> ready = new ArrayDeque<>();
    private final ArrayDeque<InboundQueue.Item> readsWaiting = new ArrayDeque<>();

    private int credits;
    private int owed;
    private boolean stalled;
    private SlabBuffer staging;
    private SlabBuffer spare;
    private long readyBytes;
    private int postedSeq;
    private int completedSeq;
    private int unsignaled;
    private boolean closing;

    SendPath(RdmaEndpoint endpoint, QueuePair qp, SlabPool pool, RendezvousGrants grants, Arena arena, int endpointId,
             int sqDepth, int peerBufferSize, int peerCredits, int readChunk, boolean localOpsNeedEmptyQueue) {
        this.endpoint = endpoint;
        this.qp = qp;
        this.pool = pool;
        this.grants = grants;
        this.wrIdBase = (long) endpointId << 32;
        this.maxInline = qp.caps().maxInlineData();
        this.stagingSize = peerBufferSize;
        this.stagingLimit = peerBufferSize - FrameHeader.SIZE; // room for an appended credit frame
        this.peerCredits = peerCredits;
        this.credits = peerCredits;
        this.creditThreshold = Math.max(1, peerCredits / 2);
        this.readChunk = readChunk;
        this.sqDepth = sqDepth;
        this.sqMask = sqDepth - 1;
        this.localOpsNeedEmptyQueue = localOpsNeedEmptyQueue;
        this.signalEvery = localOpsNeedEmptyQueue ? 1 : Math.max(1, sqDepth / 8);
        this.slotRef = new Object[sqDepth];
        this.slotKind = new byte[sqDepth];
        this.wr = new SendWorkRequest(arena, 2);
    }

    /** Largest frame (header + payload) sent by SEND; larger ones go by rendezvous. */
    int eagerLimit() {
        return stagingLimit;
    }

    // ------------------------------------------------------------------ core's sends (any thread)

    /** Stages the frames of {@code head} and {@code tail}, posts them on {@code flush}; takes ownership of both. */
    void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
        RuntimeException failure = null;
        lock.lock();
        try {
            if (!closing) {
                emit(head, tail);
                if (flush) {
                    pushStaging();
                    drain();
                }
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
            head.release();
            if (tail != null) {
                tail.release();
            }
        }
        if (failure != null) {
            endpoint.closeOnError(failure);
        }
    }

    /** Posts whatever is staged. */
    void flush() {
        RuntimeException failure = null;
        lock.lock();
        try {
            if (!closing) {
                pushStaging();
                drain();
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            endpoint.closeOnError(failure);
        }
    }

    /** Bytes waiting for credits or send-queue room. */
    long queuedBytes() {
        return readyBytes;
    }

    private void emit(SlabBuffer head, SlabBuffer tail) {
        MemorySegment hs = head.segment();
        int hl = head.length();
        int off = 0;
        while (off < hl) {
            if (hl - off < FrameHeader.SIZE) {
                concatenated(head, off, tail);
                return;
            }
            int len = FrameHeader.payloadLength(hs, off);
            if (len < 0) {
                throw new IllegalStateException("frame with negative length handed to the RDMA transport");
            }
            if ((long) off + FrameHeader.SIZE + len <= hl) {
                frame(hs, off, head, off + FrameHeader.SIZE, len);
                off += FrameHeader.SIZE + len;
            } else if (off + FrameHeader.SIZE == hl && tail != null && tail.length() == len) {
                frame(hs, off, tail, 0, len);
                return;
            } else {
                concatenated(head, off, tail);
                return;
            }
        }
        if (tail != null && tail.length() > 0) {
            emit(tail, null);
        }
    }

    /** Frames split across head and tail in an unusual place: copies them into one buffer (not on core's paths). */
    private void concatenated(SlabBuffer head, int off, SlabBuffer tail) {
        int hl = head.length() - off;
        int tl = tail == null ? 0 : tail.length();
        SlabBuffer joined = pool.allocate(hl + tl);
        try {
            MemorySegment.copy(head.segment(), off, joined.segment(), 0, hl);
            if (tl > 0) {
                MemorySegment.copy(tail.segment(), 0, joined.segment(), hl, tl);
            }
            joined.setLength(hl + tl);
            MemorySegment js = joined.segment();
            int o = 0;
            while (o < hl + tl) {
                if (hl + tl - o < FrameHeader.SIZE
                        || (long) o + FrameHeader.SIZE + FrameHeader.payloadLength(js, o) > hl + tl) {
                    throw new IllegalStateException("buffers handed to the RDMA transport do not hold whole frames");
                }
                o += FrameHeader.SIZE + FrameHeader.payloadLength(js, o);
            }
            emit(joined, null);
        } finally {
            joined.release();
        }
    }

    /** One frame: copied into staging, or offered by rendezvous when it is larger than a receive buffer. */
    private void frame(MemorySegment hs, int hoff, SlabBuffer payload, int poff, int len) {
        int size = FrameHeader.SIZE + len;
        if (size <= stagingLimit) {
            ensureRoom(size);
            MemorySegment ss = staging.segment();
            int sl = staging.length();
            MemorySegment.copy(hs, hoff, ss, sl, FrameHeader.SIZE);
            if (len > 0) {
                MemorySegment.copy(payload.segment(), poff, ss, sl + FrameHeader.SIZE, len);
            }
            staging.setLength(sl + size);
            return;
        }
        int type = FrameHeader.type(hs, hoff);
        int flags = FrameHeader.flags(hs, hoff);
        int streamId = FrameHeader.streamId(hs, hoff);
        Grant g = grants.open(payload, poff, len, streamId);
        if (g.bindPending) {
            if (localOpCanPostNow()) {
                postBind(g);
            } else {
                ready.add(g);
            }
        }
        ensureRoom(RendezvousFrames.RTS_FRAME);
        int sl = staging.length();
        RendezvousFrames.writeRts(staging.segment(), sl, streamId, type, flags, len, g.buffer.address(), g.rkey,
                g.token);
        staging.setLength(sl + RendezvousFrames.RTS_FRAME);
        RdmaMetrics.RENDEZVOUS_SENDS.increment();
        RdmaMetrics.RENDEZVOUS_BYTES.add(len);
    }

    private void ensureRoom(int bytes) {
        if (staging != null && staging.length() + bytes > stagingLimit) {
            pushStaging();
        }
        if (staging == null) {
            staging = takeStaging();
        }
    }

    private SlabBuffer takeStaging() {
        SlabBuffer s = spare;
        if (s != null) {
            spare = null;
            return s.setLength(0);
        }
        return pool.allocate(stagingSize);
    }

    private void pushStaging() {
        SlabBuffer s = staging;
        if (s != null && s.length() > 0) {
            staging = null;
            ready.add(s);
            readyBytes += s.length();
        }
    }

    // ------------------------------------------------------------------ posting (lock held)

    private boolean hasRoom() {
        return postedSeq - completedSeq < sqDepth - 1; // one slot stays free for the drain marker
    }

    /** Whether a BIND_MW or LOCAL_INV may be posted now: always, or only on an empty send queue. */
    private boolean localOpMayPost() {
        return !localOpsNeedEmptyQueue || postedSeq == completedSeq;
    }

    /** Whether a BIND_MW or LOCAL_INV can skip the queue: nothing waits before it, and it may be posted now. */
    private boolean localOpCanPostNow() {
        return ready.isEmpty() && hasRoom() && localOpMayPost();
    }

    /** Whether a local work request waits at the head of the queue for the send queue to empty. */
    private boolean localOpWaiting() {
        return localOpsNeedEmptyQueue && ready.peek() instanceof Grant;
    }

    private void drain() {
        Object op;
        while (!closing && (op = ready.peek()) != null && hasRoom()) {
            if (op instanceof SlabBuffer b) {
                if (credits < (owed > 0 ? 1 : 2)) {
                    if (!stalled) {
                        stalled = true;
                        RdmaMetrics.CREDIT_STALLS.increment();
                    }
                    return;
                }
                stalled = false;
                ready.poll();
                readyBytes -= b.length();
                postSend(b);
            } else {
                if (!localOpMayPost()) {
                    return; // nothing else is posted until the queue empties, reads included
                }
                Grant g = (Grant) op;
                ready.poll();
                if (g.bindPending) {
                    postBind(g);
                } else {
                    postInvalidate(g);
                }
            }
        }
        while (!closing && !readsWaiting.isEmpty() && hasRoom() && endpoint.inIoThread()) {
            InboundQueue.Item it = readsWaiting.peek();
            postReads(it);
            if (it.postedBytes < it.length) {
                return;
            }
            it.waitingForSendQueue = false;
            readsWaiting.poll();
        }
    }

    private long wrId(int seq) {
        return wrIdBase | (seq & 0xffffffffL);
    }

    private int signalFlag() {
        if (++unsignaled >= signalEvery) {
            unsignaled = 0;
            return SendWorkRequest.FLAG_SIGNALED;
        }
        return 0;
    }

    private void post(int seq, byte kind, Object ref) {
        int errno = qp.tryPostSend(wr);
        if (errno != 0) {
            throw new VerbsException("ibv_post_send(" + SendWorkRequest.opcodeName(wr.opcode()) + ") on qp " + qp.qpNum(),
                    errno);
        }
        int i = seq & sqMask;
        slotKind[i] = kind;
        slotRef[i] = ref;
        postedSeq = seq + 1;
    }

    private void postSend(SlabBuffer b) {
        if (owed > 0) {
            attachCredits(b);
        }
        credits--;
        int len = b.length();
        int seq = postedSeq;
        // counted before the post: the peer may answer, and a test read the counters, before post() returns
        if (len <= maxInline) {
            RdmaMetrics.INLINE_SENDS.increment();
            RdmaMetrics.INLINE_BYTES.add(len);
            wr.clear().wrId(wrId(seq)).opcode(SendWorkRequest.OPCODE_SEND)
                    .flags(SendWorkRequest.FLAG_INLINE | signalFlag()).sge(0, b.address(), len, 0);
            try {
                post(seq, INLINE, null);
            } catch (RuntimeException e) {
                b.release();
                throw e;
            }
            if (spare == null) {
                spare = b; // the data was copied into the WQE: reuse the buffer
            } else {
                b.release();
            }
            return;
        }
        MemoryRegion mr = MemoryRegistry.region(b);
        if (mr == null) {
            b.release();
            throw new IllegalStateException("a staging buffer's slab is not registered for RDMA");
        }
        unsignaled = 0;
        RdmaMetrics.EAGER_SENDS.increment();
        RdmaMetrics.EAGER_BYTES.add(len);
        wr.clear().wrId(wrId(seq)).opcode(SendWorkRequest.OPCODE_SEND).flags(SendWorkRequest.FLAG_SIGNALED)
                .sge(0, b.address(), len, mr.lkey());
        try {
            post(seq, SEND, b);
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
    }

    /** Puts the owed credits in the first header that has a free credit field, or appends a credit frame. */
    private void attachCredits(SlabBuffer b) {
        MemorySegment s = b.segment();
        int len = b.length();
        int off = 0;
        while (off + FrameHeader.SIZE <= len) {
            if (FrameHeader.type(s, off) != FrameType.WINDOW || FrameHeader.streamId(s, off) == 0) {
                FrameHeader.setCredit(s, off, FrameHeader.credit(s, off) + owed);
                owed = 0;
                return;
            }
            off += FrameHeader.SIZE + FrameHeader.payloadLength(s, off);
        }
        RendezvousFrames.writeCredit(s, len, owed);
        b.setLength(len + FrameHeader.SIZE);
        owed = 0;
    }

    private void postBind(Grant g) {
        MemoryRegion mr = MemoryRegistry.region(g.buffer);
        if (mr == null) {
            throw new IllegalStateException("a rendezvous buffer's slab is not registered for RDMA");
        }
        int seq = postedSeq;
        wr.clear().wrId(wrId(seq)).flags(signalFlag()).bindMemoryWindow(g.window.mw, g.rkey, mr, g.buffer.address(),
                g.buffer.length(), AccessFlags.REMOTE_READ);
        post(seq, BIND, g);
        g.window.mw.recordBoundRkey(g.rkey);
        g.bindPending = false;
    }

    private void postInvalidate(Grant g) {
        int seq = postedSeq;
        unsignaled = 0;
        wr.clear().wrId(wrId(seq)).opcode(SendWorkRequest.OPCODE_LOCAL_INV).flags(SendWorkRequest.FLAG_SIGNALED)
                .invalidateRkey(g.rkey);
        post(seq, INVALIDATE, g);
    }

    private void postReads(InboundQueue.Item it) {
        MemoryRegion mr = MemoryRegistry.region(it.buffer);
        if (mr == null) {
            throw new IllegalStateException("a rendezvous destination's slab is not registered for RDMA");
        }
        while (it.postedBytes < it.length && hasRoom()) {
            int n = Math.min(readChunk, it.length - it.postedBytes);
            int seq = postedSeq;
            unsignaled = 0;
            wr.clear().wrId(wrId(seq)).opcode(SendWorkRequest.OPCODE_RDMA_READ).flags(SendWorkRequest.FLAG_SIGNALED)
                    .remote(it.remoteAddress + it.postedBytes, it.rkey)
                    .sge(0, it.buffer.address() + it.postedBytes, n, mr.lkey());
            post(seq, READ, it);
            it.postedBytes += n;
            it.readsPending++;
        }
    }

    // ------------------------------------------------------------------ poller side

    /** Starts the RDMA READs of an RTS (poller thread); what does not fit the send queue waits. */
    void startRead(InboundQueue.Item it) {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            if (readsWaiting.isEmpty() && !localOpWaiting()) {
                postReads(it);
            }
            if (it.postedBytes < it.length) {
                it.waitingForSendQueue = true;
                readsWaiting.add(it);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stages and posts a FIN for a rendezvous this side has read (poller thread). */
    void sendFin(int streamId, int token) {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            ensureRoom(RendezvousFrames.FIN_FRAME);
            int sl = staging.length();
            RendezvousFrames.writeFin(staging.segment(), sl, streamId, token);
            staging.setLength(sl + RendezvousFrames.FIN_FRAME);
            pushStaging();
            drain();
        } finally {
            lock.unlock();
        }
    }

    /** The peer's FIN: ends that grant (LOCAL_INV first for a window). */
    void onFin(int token, int streamId) {
        lock.lock();
        try {
            Grant g = grants.take(token, streamId);
            if (g == null) {
                throw new ProtocolException("FIN on stream " + streamId + " names rendezvous token " + token
                        + ", which this side has not offered on that stream (or already released)");
            }
            if (g.bindPending) {
                ready.remove(g);
                grants.release(g);
                throw new ProtocolException("FIN on stream " + streamId + " for token " + token + " before its RTS was sent");
            }
            if (g.window == null) {
                grants.release(g);
            } else if (localOpCanPostNow()) {
                postInvalidate(g);
            } else {
                ready.add(g);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Receive credits the peer returned. */
    void onCredits(int n) {
        lock.lock();
        try {
            credits += n;
            if (credits > peerCredits || credits < 0) {
                throw new ProtocolException("the peer returned more receive credits than it granted (" + credits
                        + " > " + peerCredits + ")");
            }
            drain();
        } finally {
            lock.unlock();
        }
    }

    /** This side finished with {@code n} of the peer's SENDs: owes it that many credits; returns them when due. */
    void receivesDone(int n) {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            owed += n;
            if (owed >= creditThreshold && ready.isEmpty()) {
                if (staging != null && staging.length() > 0) {
                    pushStaging(); // unflushed frames carry the credits
                } else {
                    ready.add(takeStaging()); // an empty SEND: attachCredits appends a credit frame
                    RdmaMetrics.CREDIT_UPDATES.increment();
                }
            }
            drain();
        } finally {
            lock.unlock();
        }
    }

    /** Retries what waits for send-queue room (poller thread). */
    void retry() {
        lock.lock();
        try {
            drain();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A send-queue completion: completes every slot up to {@code seq} (earlier unsignaled WRs finished with it).
     *
     * @return {@link #READ_DONE} / {@link #DRAINED} bits
     * @throws IllegalStateException naming the work completion status when it is an error other than a flush
     */
    int onCompletion(int seq, int status) {
        int result = 0;
        String failure = null;
        byte failedKind = NONE;
        lock.lock();
        try {
            if (seq - completedSeq < 0 || seq - postedSeq >= 0) {
                return 0; // not ours any more
            }
            int end = seq + 1;
            while (completedSeq != end) {
                int i = completedSeq & sqMask;
                byte kind = slotKind[i];
                Object ref = slotRef[i];
                slotKind[i] = NONE;
                slotRef[i] = null;
                completedSeq++;
                switch (kind) {
                    case SEND -> ((SlabBuffer) ref).release();
                    case READ -> {
                        ((InboundQueue.Item) ref).readsPending--;
                        result |= READ_DONE;
                    }
                    case INVALIDATE -> grants.release((Grant) ref);
                    case DRAIN -> result |= DRAINED;
                    default -> {
                    }
                }
                if (completedSeq == end && status != WorkCompletion.STATUS_SUCCESS
                        && status != WorkCompletion.STATUS_WR_FLUSH_ERR) {
                    failure = describe(kind, status);
                    failedKind = kind;
                }
            }
            if (failure == null && !closing) {
                drain();
            }
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            if (failedKind == READ && status == WorkCompletion.STATUS_REM_ACCESS_ERR) {
                // the peer's RTS named memory it had not granted: bad input, not a transport failure
                throw new ProtocolException(failure);
            }
            throw new IllegalStateException(failure);
        }
        return result;
    }

    private String describe(byte kind, int status) {
        String what = switch (kind) {
            case INLINE, SEND -> "SEND";
            case READ -> "RDMA READ of the peer's rendezvous buffer";
            case BIND -> "BIND_MW of a rendezvous buffer";
            case INVALIDATE -> "LOCAL_INV of a rendezvous window";
            case DRAIN -> "drain marker";
            default -> "work request";
        };
        String hint = switch (status) {
            case WorkCompletion.STATUS_REM_ACCESS_ERR -> kind == READ
                    ? " (the peer's RTS named an rkey or address range it had not granted)"
                    : " (the peer's rkey or address range was not valid)";
            case WorkCompletion.STATUS_RETRY_EXC_ERR -> " (the peer stopped answering)";
            case WorkCompletion.STATUS_RNR_RETRY_EXC_ERR -> " (the peer had no receive buffer posted)";
            default -> "";
        };
        return "RDMA completion error " + WorkCompletion.statusName(status) + " on " + what + ", qp " + qp.qpNum() + hint;
    }

    // ------------------------------------------------------------------ teardown (poller thread)

    /**
     * Moves the QP to ERR and posts a signaled marker behind everything outstanding; frees what was never posted.
     *
     * @return false if the marker could not be posted (finish at once)
     */
    boolean beginClose() {
        lock.lock();
        try {
            closing = true;
            releaseUnposted();
            try {
                qp.toError();
            } catch (RuntimeException e) {
                return false;
            }
            int seq = postedSeq;
            wr.clear().wrId(wrId(seq)).opcode(SendWorkRequest.OPCODE_SEND).flags(SendWorkRequest.FLAG_SIGNALED).numSge(0);
            try {
                post(seq, DRAIN, null);
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        } finally {
            lock.unlock();
        }
    }

    private void releaseUnposted() {
        if (staging != null) {
            staging.release();
            staging = null;
        }
        if (spare != null) {
            spare.release();
            spare = null;
        }
        Object op;
        while ((op = ready.poll()) != null) {
            if (op instanceof SlabBuffer b) {
                b.release();
            } else if (!((Grant) op).bindPending) {
                grants.release((Grant) op); // taken by a FIN, waiting for its LOCAL_INV
            }
        }
        readyBytes = 0;
        readsWaiting.clear();
    }

    /** Frees the windows, destroys the QP, then frees every buffer still held by the send queue and by grants. */
    void finishClose() {
        lock.lock();
        try {
            closing = true;
            releaseUnposted();
            try {
                grants.closeWindows();
            } catch (RuntimeException e) {
                Fallbacks.LOG.log(System.Logger.Level.WARNING, "ibv_dealloc_mw on qp {0} failed: {1}", qp.qpNum(), e.toString());
            }
            try {
                qp.close();
            } catch (RuntimeException e) {
                Fallbacks.LOG.log(System.Logger.Level.WARNING, "ibv_destroy_qp({0}) failed: {1}", qp.qpNum(), e.toString());
            }
            while (completedSeq != postedSeq) {
                int i = completedSeq & sqMask;
                if (slotKind[i] == SEND) {
                    ((SlabBuffer) slotRef[i]).release();
                } else if (slotKind[i] == INVALIDATE) {
                    grants.release((Grant) slotRef[i]);
                }
                slotKind[i] = NONE;
                slotRef[i] = null;
                completedSeq++;
            }
            grants.releaseAll();
        } finally {
            lock.unlock();
        }
    }
}
