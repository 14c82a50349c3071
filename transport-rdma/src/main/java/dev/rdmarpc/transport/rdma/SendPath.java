package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.transport.rdma.RendezvousGrants.Grant;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.RegisteredMemory;
import dev.rdmarpc.transport.rdma.verbs.SendQueueTarget;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection's send side: turns core's frames into SENDs and decides what is posted when. Small frames are
 * copied into a staging buffer of the peer's receive-buffer size (several share one SEND); a frame of at least
 * {@link #GATHER_MIN_PAYLOAD} payload bytes that fits a receive buffer goes as its own SEND whose two scatter/gather
 * entries point at its header and payload in core's registered slabs (no copy); a frame too large for a receive
 * buffer is replaced by an RTS naming a rendezvous grant ({@link RendezvousGrants}). A staging buffer is posted on
 * flush or when full: inline when it fits the QP's {@code max_inline_data}, else from its registered slab.
 * Every SEND spends one of the peer's receive credits and carries the credits this side owes in its first frame
 * header (or in an appended credit frame); the last credit is kept for a SEND that returns credits, so two peers
 * never wait on each other ({@link CreditLedger}). What cannot be posted (no credit, send queue full) waits in
 * order ({@link WaitingWork}); the connection reports itself not writable while waiting sends and open rendezvous
 * grants hold more than {@link #HIGH_WATER} bytes, and writable again ({@link SendEvents#writable()}) once they
 * fall to {@link #LOW_WATER}. The send queue also carries the RDMA READs of the receive side
 * ({@link RendezvousReads}) and the BIND_MW / LOCAL_INV of rendezvous grants. Every send-queue slot remembers what
 * to release when its completion (or a later one) arrives ({@link SendSlots}). Where the device replays local work
 * requests on a retry (Soft-RoCE), a BIND_MW or LOCAL_INV waits until the send queue is empty and every work
 * request is signaled, so the queue's state is always known; see {@link RdmaDeviceContext#localOpsNeedEmptySendQueue()}.
 * All state is guarded by {@link #lock}.
 */
final class SendPath {
    /** Bytes held by waiting sends and open grants above which the connection is not writable. */
    static final long HIGH_WATER = 4L << 20;
    /** Bytes at or below which a connection that was not writable is writable again. */
    static final long LOW_WATER = 2L << 20;
    /**
     * Smallest payload sent from core's own buffers instead of copied into a staging buffer. Below it a copy (well
     * under a microsecond) is cheaper than what a SEND of its own costs: a credit, a signaled work request and its
     * completion, and the batching of neighbouring small frames it would break.
     */
    static final int GATHER_MIN_PAYLOAD = 2048;

    /** {@link #onCompletion} result bit: an RDMA READ finished (frames may be deliverable). */
    static final int READ_DONE = 1;
    /** {@link #onCompletion} result bit: the drain marker completed (teardown may finish). */
    static final int DRAINED = 2;

    final ReentrantLock lock = new ReentrantLock();
    private final SendEvents events;
    private final SendQueueTarget qp;
    private final SlabPool pool;
    /** Which device context's memory regions this path uses (see MemoryRegistry). */
    private final int device;
    private final RendezvousGrants grants;
    private final int maxInline;
    private final int stagingSize;
    private final int stagingLimit;
    private final boolean localOpsNeedEmptyQueue;
    private final SendWorkRequest wr;
    private final CreditLedger credits;
    private final SendSlots slots;
    private final WaitingWork waiting = new WaitingWork();
    private final RendezvousReads reads;
    private final SendSlots.Completed onSlotDone = this::slotDone;

    private SlabBuffer staging;
    private SlabBuffer spare;
    /** During {@link #send}: core's buffers whose reference is still the caller's (null once a SEND took it over). */
    private SlabBuffer callerHead;
    private SlabBuffer callerTail;
    private boolean closing;
    private volatile boolean unwritable;
    private boolean writableEvent;
    private int completionResult;

    SendPath(SendEvents events, SendQueueTarget qp, SlabPool pool, RendezvousGrants grants, Arena arena, int endpointId,
             int sqDepth, int peerBufferSize, int peerCredits, int readChunk, boolean localOpsNeedEmptyQueue, int device) {
        this.events = events;
        this.device = device;
        this.qp = qp;
        this.pool = pool;
        this.grants = grants;
        this.maxInline = qp.maxInlineData();
        this.stagingSize = peerBufferSize;
        this.stagingLimit = peerBufferSize - FrameHeader.SIZE; // room for an appended credit frame
        this.localOpsNeedEmptyQueue = localOpsNeedEmptyQueue;
        this.credits = new CreditLedger(peerCredits);
        this.slots = new SendSlots(qp, endpointId, sqDepth, localOpsNeedEmptyQueue);
        this.reads = new RendezvousReads(pool, readChunk, device);
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
        boolean releaseHead = true;
        boolean releaseTail = tail != null;
        lock.lock();
        try {
            if (!closing) {
                callerHead = head;
                callerTail = tail;
                try {
                    emit(head, tail);
                } finally {
                    releaseHead = callerHead != null;
                    releaseTail = callerTail != null;
                    callerHead = null;
                    callerTail = null;
                }
                if (flush) {
                    pushStaging();
                    drain();
                }
                updateWritability();
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
            if (releaseHead) {
                head.release();
            }
            if (releaseTail) {
                tail.release();
            }
        }
        afterUnlock(failure, true);
    }

    /**
     * Sends a frame whose header is {@code head} (takes ownership) and whose payload is application memory: copied into
     * staging when it fits a SEND, else offered by rendezvous straight from that memory (registered through the
     * connection's registration cache); {@code done} runs once nothing references the memory. A registration the
     * device refuses throws to the caller (that call fails; the connection carries on), after running {@code done}.
     */
    void sendForeign(SlabBuffer head, MemorySegment body, Runnable done, boolean flush) {
        RuntimeException failure = null;
        RuntimeException refused = null;
        boolean runDone = true;
        int len = (int) body.byteSize();
        lock.lock();
        try {
            if (!closing) {
                MemorySegment hs = head.segment();
                if (FrameHeader.SIZE + len <= stagingLimit) {
                    stage(hs, 0, body, 0, len);
                } else {
                    int streamId = FrameHeader.streamId(hs, 0);
                    Grant g = null;
                    try {
                        g = grants.openForeign(body, streamId, done);
                    } catch (RuntimeException e) {
                        if (RendezvousGrants.errno(e) != RendezvousGrants.EFAULT) {
                            refused = e;
                        }
                    }
                    if (g != null) {
                        runDone = false;
                        offer(g, FrameHeader.type(hs, 0), FrameHeader.flags(hs, 0), streamId, len);
                    } else if (refused == null) {
                        // memory the device cannot pin (EFAULT: e.g. some file mappings): copied once into a slab,
                        // offered from there
                        SlabBuffer copy = pool.allocate(len);
                        try {
                            MemorySegment.copy(body, 0, copy.segment(), 0, len);
                            copy.setLength(len);
                            frame(head, 0, copy, 0, len);
                        } finally {
                            copy.release();
                        }
                    }
                }
                if (refused == null && flush) {
                    pushStaging();
                    drain();
                }
                updateWritability();
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
            head.release();
            if (runDone) {
                done.run();
            }
        }
        if (refused != null) {
            throw refused;
        }
        afterUnlock(failure, true);
    }

    /** The connection's rendezvous grants (tests). */
    RendezvousGrants grants() {
        return grants;
    }

    /** Posts whatever is staged. */
    void flush() {
        RuntimeException failure = null;
        lock.lock();
        try {
            if (!closing) {
                pushStaging();
                drain();
                updateWritability();
            }
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            lock.unlock();
        }
        afterUnlock(failure, true);
    }

    /** Bytes held for sends not yet done: waiting SENDs and the payloads of open rendezvous grants. */
    long queuedBytes() {
        lock.lock();
        try {
            return heldBytes();
        } finally {
            lock.unlock();
        }
    }

    /** False from when {@link #queuedBytes()} exceeds {@link #HIGH_WATER} until it is back at {@link #LOW_WATER}. */
    boolean isWritable() {
        return !unwritable;
    }

    private long heldBytes() {
        return waiting.bytes() + grants.openBytes();
    }

    private void updateWritability() {
        long held = heldBytes();
        if (!unwritable && held > HIGH_WATER) {
            unwritable = true;
        } else if (unwritable && held <= LOW_WATER) {
            unwritable = false;
            writableEvent = true;
        }
    }

    /**
     * Outside the lock: reports a failure (closing the connection) or that the connection is writable again;
     * {@code inCall} when this ends one of core's own sends or flushes.
     */
    private void afterUnlock(RuntimeException failure, boolean inCall) {
        if (failure != null) {
            events.closeOnError(failure);
            return;
        }
        boolean fire;
        lock.lock();
        try {
            fire = writableEvent;
            writableEvent = false;
        } finally {
            lock.unlock();
        }
        if (fire && inCall) {
            events.writableAfterCall();
        } else if (fire) {
            events.writable();
        }
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
                frame(head, off, head, off + FrameHeader.SIZE, len);
                off += FrameHeader.SIZE + len;
            } else if (off + FrameHeader.SIZE == hl && tail != null && tail.length() == len) {
                frame(head, off, tail, 0, len);
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

    /**
     * One frame: copied into staging, sent from core's buffers, or offered by rendezvous when it is larger than a
     * receive buffer.
     */
    private void frame(SlabBuffer header, int hoff, SlabBuffer payload, int poff, int len) {
        MemorySegment hs = header.segment();
        int size = FrameHeader.SIZE + len;
        if (size <= stagingLimit) {
            if (len >= GATHER_MIN_PAYLOAD && MemoryRegistry.registered(header, device) != null
                    && MemoryRegistry.registered(payload, device) != null
                    && !(FrameHeader.type(hs, hoff) == FrameType.WINDOW && FrameHeader.streamId(hs, hoff) != 0)) {
                pushStaging(); // frames staged before it go first
                SlabBuffer h = reference(header);
                SlabBuffer p = reference(payload);
                waiting.addGather(h, hoff, p, poff, len);
                return;
            }
            stage(hs, hoff, payload.segment(), poff, len);
            return;
        }
        int type = FrameHeader.type(hs, hoff);
        int flags = FrameHeader.flags(hs, hoff);
        int streamId = FrameHeader.streamId(hs, hoff);
        offer(grants.open(payload, poff, len, streamId), type, flags, streamId, len);
    }

    /** Offers a grant by RTS: binds its window first (now, or queued ahead of the RTS). */
    private void offer(Grant g, int type, int flags, int streamId, int len) {
        if (g.bindPending) {
            if (localOpCanPostNow()) {
                postBind(g);
            } else {
                pushStaging(); // the RTS naming the window must follow its bind
                waiting.addBind(g);
            }
        }
        ensureRoom(RendezvousFrames.RTS_FRAME);
        int sl = staging.length();
        RendezvousFrames.writeRts(staging.segment(), sl, streamId, type, flags, len, g.address(), g.rkey,
                g.token);
        staging.setLength(sl + RendezvousFrames.RTS_FRAME);
        RdmaMetrics.RENDEZVOUS_SENDS.increment();
        RdmaMetrics.RENDEZVOUS_BYTES.add(len);
    }

    /**
     * A reference to {@code b} for a SEND from core's buffers: the caller's own when it is still untaken (no
     * allocation), else a retained view of the same bytes (a buffer holding two such frames, or a slice, which
     * cannot be retained twice).
     */
    private SlabBuffer reference(SlabBuffer b) {
        if (b == callerHead) {
            callerHead = null;
            return b;
        }
        if (b == callerTail) {
            callerTail = null;
            return b;
        }
        return b.retainedSlice(0, b.length());
    }

    /** Copies a frame's header and its {@code len} payload bytes into staging (room made first). */
    private void stage(MemorySegment header, long hoff, MemorySegment payload, long poff, int len) {
        int size = FrameHeader.SIZE + len;
        ensureRoom(size);
        MemorySegment ss = staging.segment();
        int sl = staging.length();
        MemorySegment.copy(header, hoff, ss, sl, FrameHeader.SIZE);
        if (len > 0) {
            MemorySegment.copy(payload, poff, ss, sl + FrameHeader.SIZE, len);
        }
        staging.setLength(sl + size);
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
            waiting.addSend(s);
        }
    }

    // ------------------------------------------------------------------ posting (lock held)

    /** Whether a BIND_MW or LOCAL_INV may be posted now: always, or only on an empty send queue. */
    private boolean localOpMayPost() {
        return !localOpsNeedEmptyQueue || slots.isEmpty();
    }

    /** Whether a BIND_MW or LOCAL_INV can skip the queue: nothing waits before it, and it may be posted now. */
    private boolean localOpCanPostNow() {
        return waiting.isEmpty() && slots.hasRoom() && localOpMayPost();
    }

    /** Whether a local work request waits at the head of the queue for the send queue to empty. */
    private boolean localOpWaiting() {
        byte k = waiting.peekKind();
        return localOpsNeedEmptyQueue && (k == WaitingWork.BIND || k == WaitingWork.INVALIDATE);
    }

    private void drain() {
        postWaiting();
        if (closing || !events.inIoThread() || localOpWaiting()) {
            return; // READs are posted by the poller, and never ahead of a local work request waiting for room
        }
        reads.post(slots, wr);
        int freed = reads.takeCreditsFreed();
        if (freed > 0) {
            oweCredits(freed);
            postWaiting();
        }
    }

    private void postWaiting() {
        byte kind;
        while (!closing && (kind = waiting.peekKind()) != 0 && slots.hasRoom()) {
            switch (kind) {
                case WaitingWork.SEND, WaitingWork.SEND_GATHER -> {
                    if (!credits.maySend()) {
                        return;
                    }
                    if (kind == WaitingWork.SEND) {
                        SlabBuffer b = (SlabBuffer) waiting.peekRef();
                        waiting.poll();
                        postStaged(b);
                    } else {
                        SlabBuffer h = (SlabBuffer) waiting.peekRef();
                        SlabBuffer p = waiting.peekPayload();
                        long hoff = waiting.peekHeaderOffset();
                        long poff = waiting.peekPayloadOffset();
                        int len = waiting.peekPayloadLength();
                        waiting.poll();
                        postGather(h, hoff, p, poff, len);
                    }
                }
                default -> {
                    if (!localOpMayPost()) {
                        return; // nothing else is posted until the queue empties, reads included
                    }
                    Grant g = (Grant) waiting.peekRef();
                    waiting.poll();
                    if (kind == WaitingWork.BIND) {
                        postBind(g);
                    } else {
                        postInvalidate(g);
                    }
                }
            }
        }
    }

    private void postStaged(SlabBuffer b) {
        int carried = credits.spend();
        if (carried > 0) {
            attachCredits(b, carried);
        }
        int len = b.length();
        // counted before the post: the peer may answer, and a test read the counters, before post() returns
        if (len <= maxInline) {
            RdmaMetrics.INLINE_SENDS.increment();
            RdmaMetrics.INLINE_BYTES.add(len);
            wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_SEND)
                    .flags(SendWorkRequest.FLAG_INLINE | slots.signalFlag()).sge(0, b.address(), len, 0);
            try {
                slots.post(wr, SendSlots.INLINE, null, null);
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
        RegisteredMemory mr = MemoryRegistry.registered(b, device);
        if (mr == null) {
            b.release();
            throw new IllegalStateException("a staging buffer's slab is not registered for RDMA");
        }
        RdmaMetrics.EAGER_SENDS.increment();
        RdmaMetrics.EAGER_BYTES.add(len);
        wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_SEND).flags(slots.signaled())
                .sge(0, b.address(), len, mr.lkey());
        try {
            slots.post(wr, SendSlots.SEND, b, null);
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
    }

    /** One frame from core's buffers: header and payload as two scatter/gather entries, released on completion. */
    private void postGather(SlabBuffer header, long hoff, SlabBuffer payload, long poff, int len) {
        try {
            int carried = credits.spend();
            MemorySegment hs = header.segment();
            if (carried > 0) {
                FrameHeader.setCredit(hs, hoff, FrameHeader.credit(hs, hoff) + carried);
            }
            RegisteredMemory hm = MemoryRegistry.registered(header, device);
            RegisteredMemory pm = MemoryRegistry.registered(payload, device);
            RdmaMetrics.EAGER_SENDS.increment();
            RdmaMetrics.EAGER_BYTES.add(FrameHeader.SIZE + len);
            wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_SEND).flags(slots.signaled())
                    .sge(0, header.address() + hoff, FrameHeader.SIZE, hm.lkey())
                    .sge(1, payload.address() + poff, len, pm.lkey());
            slots.post(wr, SendSlots.SEND_GATHER, header, payload);
        } catch (RuntimeException e) {
            header.release();
            payload.release();
            throw e;
        }
    }

    /** Puts the owed credits in the first header that has a free credit field, or appends a credit frame. */
    private static void attachCredits(SlabBuffer b, int owed) {
        MemorySegment s = b.segment();
        int len = b.length();
        int off = 0;
        while (off + FrameHeader.SIZE <= len) {
            if (FrameHeader.type(s, off) != FrameType.WINDOW || FrameHeader.streamId(s, off) == 0) {
                FrameHeader.setCredit(s, off, FrameHeader.credit(s, off) + owed);
                return;
            }
            off += FrameHeader.SIZE + FrameHeader.payloadLength(s, off);
        }
        RendezvousFrames.writeCredit(s, len, owed);
        b.setLength(len + FrameHeader.SIZE);
    }

    private void postBind(Grant g) {
        MemoryRegion mr = g.bindRegion(device);
        if (mr == null) {
            throw new IllegalStateException("a rendezvous buffer's slab is not registered for RDMA");
        }
        wr.clear().wrId(slots.nextWrId()).flags(slots.signalFlag()).bindMemoryWindow(g.window.mw, g.rkey, mr,
                g.address(), g.length, AccessFlags.REMOTE_READ);
        slots.post(wr, SendSlots.BIND, g, null);
        g.window.mw.recordBoundRkey(g.rkey);
        g.bindPending = false;
    }

    private void postInvalidate(Grant g) {
        wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_LOCAL_INV).flags(slots.signaled())
                .invalidateRkey(g.rkey);
        slots.post(wr, SendSlots.INVALIDATE, g, null);
    }

    /** Adds owed credits; queues a SEND carrying them when enough are owed and nothing else would carry them. */
    private void oweCredits(int n) {
        credits.owe(n);
        if (credits.updateDue() && waiting.isEmpty()) {
            if (staging != null && staging.length() > 0) {
                pushStaging(); // unflushed frames carry the credits
            } else {
                waiting.addSend(takeStaging()); // an empty SEND: attachCredits appends a credit frame
                RdmaMetrics.CREDIT_UPDATES.increment();
            }
        }
    }

    // ------------------------------------------------------------------ poller side

    /**
     * Queues the RDMA READ of an RTS (poller thread); its destination is allocated when the READ is posted, within
     * the connection's read budget ({@link RendezvousReads}). On return {@code it.buffer} is set if it was posted.
     */
    void startRead(InboundQueue.Item it) {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            reads.add(it);
            drain();
        } finally {
            lock.unlock();
        }
    }

    /** Core has been handed the frame of a READ whose destination had {@code capacity} bytes (poller thread). */
    void readDelivered(int capacity) {
        lock.lock();
        try {
            reads.delivered(capacity);
            if (!closing) {
                drain();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The read budget (rendezvous destinations held now) and the SENDs this connection holds. */
    RendezvousReads reads() {
        return reads;
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
                waiting.removeBind(g);
                grants.release(g);
                throw new ProtocolException("FIN on stream " + streamId + " for token " + token + " before its RTS was sent");
            }
            if (g.window == null) {
                grants.release(g);
            } else if (localOpCanPostNow()) {
                postInvalidate(g);
            } else {
                waiting.addInvalidate(g);
            }
            updateWritability();
        } finally {
            lock.unlock();
        }
    }

    /** Receive credits the peer returned. */
    void onCredits(int n) {
        lock.lock();
        try {
            credits.returned(n);
            drain();
            updateWritability();
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
            oweCredits(n);
            drain();
        } finally {
            lock.unlock();
        }
    }

    /** Retries what waits for send-queue room (poller thread), and reports writability regained. */
    void retry() {
        lock.lock();
        try {
            if (!closing) {
                drain();
                updateWritability();
            }
        } finally {
            lock.unlock();
        }
        afterUnlock(null, false);
    }

    /**
     * A send-queue completion: completes every slot up to {@code seq} (earlier unsignaled WRs finished with it).
     *
     * @return {@link #READ_DONE} / {@link #DRAINED} bits
     * @throws IllegalStateException naming the work completion status when it is an error other than a flush
     */
    int onCompletion(int seq, int status) {
        String failure = null;
        byte failedKind = SendSlots.NONE;
        int result;
        lock.lock();
        try {
            boolean failed = status != WorkCompletion.STATUS_SUCCESS && status != WorkCompletion.STATUS_WR_FLUSH_ERR;
            if (!slots.isOutstanding(seq)) {
                if (!failed) {
                    return 0; // not ours any more
                }
                // an error on a work request this path has not posted (or already completed) puts the queue pair in
                // the error state all the same: the connection fails
                failure = describe(SendSlots.NONE, status);
                result = 0;
            } else {
                completionResult = 0;
                byte kind = slots.completeThrough(seq, onSlotDone);
                result = completionResult;
                if (failed) {
                    failure = describe(kind, status);
                    failedKind = kind;
                }
            }
            if (failure == null && !closing) {
                drain();
                updateWritability();
            }
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            if (failedKind == SendSlots.READ && status == WorkCompletion.STATUS_REM_ACCESS_ERR) {
                // the peer's RTS named memory it had not granted: bad input, not a transport failure
                throw new ProtocolException(failure);
            }
            throw new IllegalStateException(failure);
        }
        return result;
    }

    /** What a completed slot held: released now. */
    private void slotDone(byte kind, Object ref, Object ref2) {
        switch (kind) {
            case SendSlots.SEND -> ((SlabBuffer) ref).release();
            case SendSlots.SEND_GATHER -> {
                ((SlabBuffer) ref).release();
                ((SlabBuffer) ref2).release();
            }
            case SendSlots.READ -> {
                ((InboundQueue.Item) ref).readsPending--;
                completionResult |= READ_DONE;
            }
            case SendSlots.INVALIDATE -> grants.release((Grant) ref);
            case SendSlots.DRAIN -> completionResult |= DRAINED;
            default -> {
            }
        }
    }

    private String describe(byte kind, int status) {
        String what = switch (kind) {
            case SendSlots.INLINE, SendSlots.SEND, SendSlots.SEND_GATHER -> "SEND";
            case SendSlots.READ -> "RDMA READ of the peer's rendezvous buffer";
            case SendSlots.NONE -> "a work request this connection did not post";
            case SendSlots.BIND -> "BIND_MW of a rendezvous buffer";
            case SendSlots.INVALIDATE -> "LOCAL_INV of a rendezvous window";
            case SendSlots.DRAIN -> "drain marker";
            default -> "work request";
        };
        String hint = switch (status) {
            case WorkCompletion.STATUS_REM_ACCESS_ERR -> kind == SendSlots.READ
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
            wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_SEND).flags(slots.signaled()).numSge(0);
            try {
                slots.post(wr, SendSlots.DRAIN, null, null);
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
        waiting.releaseAll(grants);
        reads.clear();
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
            slots.completeAll((kind, ref, ref2) -> {
                switch (kind) {
                    case SendSlots.SEND -> ((SlabBuffer) ref).release();
                    case SendSlots.SEND_GATHER -> {
                        ((SlabBuffer) ref).release();
                        ((SlabBuffer) ref2).release();
                    }
                    case SendSlots.INVALIDATE -> grants.release((Grant) ref);
                    default -> {
                    }
                }
            });
            grants.releaseAll();
        } finally {
            lock.unlock();
        }
    }
}
