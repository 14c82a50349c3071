package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.transport.rdma.InboundQueue.Item;

import java.lang.foreign.MemorySegment;

/**
 * One connection's receive side, on the poller thread: checks every frame of a received SEND
 * ({@link FrameHeader#validate}), takes the receive credits its headers carry, hands frames to core's
 * {@link FrameHandler} together with the slab buffer holding them (the receive buffer, or a READ destination), answers
 * an RTS with RDMA READs into a slab of its own (allocated when the READ is posted, within the connection's read
 * budget: {@link RendezvousReads}) and, once read, a FIN and a normal frame for core, and passes FIN to the send side.
 * While a READ waits or is in flight later frames wait in an {@link InboundQueue}, so core sees them in order. Core may
 * keep a reference to the buffer of a frame (a whole message that fills a good part of it), so the peer's credit for
 * a SEND is not tied to its buffer's last release but to the SEND's {@link ReceiveHolds}: it is due once every frame
 * of it has been handed to core and every RTS of it has had its READ posted.
 */
final class ReceivePath {
    private final RdmaEndpoint endpoint;
    private final SendPath send;
    private final FrameHandler handler;
    private final SlabPool pool;
    private final InboundQueue queue = new InboundQueue();
    private final ReceiveHolds holds;
    /** The {@link ReceiveHolds} id of the SEND being handled by {@link #onReceive}. */
    private int current;

    ReceivePath(RdmaEndpoint endpoint, SendPath send, FrameHandler handler, SlabPool pool) {
        this.endpoint = endpoint;
        this.send = send;
        this.handler = handler;
        this.pool = pool;
        this.holds = send.reads().holds();
    }

    /**
     * Handles one received SEND of {@code length} bytes in {@code buffer}.
     *
     * @return true if the peer's credit for this SEND is due now; false if frames or RTSs of it wait (they hold
     * references to the buffer, and the last of them to leave returns the credit). Either way core may have kept a
     * reference to the buffer: the caller reposts it only if it holds the last one.
     * @throws ProtocolException when a frame is malformed (the caller closes the connection)
     */
    boolean onReceive(SlabBuffer buffer, int length) {
        RdmaMetrics.RECEIVES.increment();
        RdmaMetrics.RECEIVE_BYTES.add(length);
        MemorySegment seg = buffer.segment();
        int maxPayload = endpoint.maxInboundPayload();
        int off = 0;
        int credits = 0;
        int sendId = holds.open();
        current = sendId;
        boolean due = false;
        try {
            while (off < length && endpoint.isOpen()) {
                if (length - off < FrameHeader.SIZE) {
                    throw new ProtocolException("a " + length + "-byte SEND ends inside a frame header");
                }
                FrameHeader.validate(seg, off, maxPayload, false);
                int len = FrameHeader.payloadLength(seg, off);
                if (off + FrameHeader.SIZE + len > length) {
                    throw new ProtocolException(FrameHeader.describe(seg, off) + " runs past the end of its "
                            + length + "-byte SEND");
                }
                int type = FrameHeader.type(seg, off);
                int flags = FrameHeader.flags(seg, off);
                int streamId = FrameHeader.streamId(seg, off);
                int credit = FrameHeader.credit(seg, off);
                int coreCredit = 0;
                if (type == FrameType.WINDOW && streamId != 0) {
                    coreCredit = credit; // a stream window increment: core's
                } else {
                    if (credit < 0) {
                        throw new ProtocolException("negative receive credit " + credit + " in " + FrameHeader.describe(seg, off));
                    }
                    credits += credit;
                }
                switch (type) {
                    case FrameType.WINDOW -> {
                        if (streamId == 0) {
                            if (len == Frames.CONNECTION_WINDOW_SIZE) {
                                frame(buffer, off, type, flags, streamId, 0, len); // core's connection WINDOW
                            } else if (len != 0) {
                                throw new ProtocolException("a WINDOW on stream 0 with a " + len + "-byte payload (a credit"
                                        + " frame has none, a connection WINDOW " + Frames.CONNECTION_WINDOW_SIZE + ")");
                            }
                        } else {
                            frame(buffer, off, type, flags, streamId, coreCredit, len);
                        }
                    }
                    case FrameType.RTS -> rts(buffer, off, streamId, maxPayload);
                    case FrameType.FIN -> {
                        if (len != RendezvousFrames.FIN_SIZE) {
                            throw new ProtocolException("FIN on stream " + streamId + " has a " + len + "-byte payload, not "
                                    + RendezvousFrames.FIN_SIZE);
                        }
                        send.onFin(RendezvousFrames.finToken(seg, off + FrameHeader.SIZE), streamId);
                    }
                    default -> frame(buffer, off, type, flags, streamId, coreCredit, len);
                }
                off += FrameHeader.SIZE + len;
            }
        } finally {
            due = holds.drop(sendId);
            if (credits > 0 && endpoint.isOpen()) {
                send.onCredits(credits);
            }
        }
        return due;
    }

    /** A frame for core: now, or behind a rendezvous still being read (then it holds the SEND). */
    private void frame(SlabBuffer buffer, int off, int type, int flags, int streamId, int credit, int len) {
        if (queue.isEmpty()) {
            deliver(type, flags, streamId, credit, buffer, off + FrameHeader.SIZE, len);
            return;
        }
        Item it = queue.push(InboundQueue.FRAME);
        it.buffer = buffer.retain();
        it.hold = current;
        holds.hold(current);
        it.offset = off;
        it.type = type;
        it.flags = flags;
        it.streamId = streamId;
        it.credit = credit;
        it.length = len;
    }

    /**
     * An RTS: checked, then queued for its READ. Its destination is allocated only when the READ is posted, within the
     * connection's read budget; until then it keeps the receive buffer and holds the SEND (the peer's credit).
     */
    private void rts(SlabBuffer buffer, int off, int streamId, int maxPayload) {
        MemorySegment seg = buffer.segment();
        RendezvousFrames.validateRts(seg, off, maxPayload);
        long p = off + FrameHeader.SIZE;
        Item it = queue.push(InboundQueue.READ);
        it.type = RendezvousFrames.rtsType(seg, p);
        it.flags = RendezvousFrames.rtsFlags(seg, p);
        it.streamId = streamId;
        it.length = RendezvousFrames.rtsLength(seg, p);
        it.remoteAddress = RendezvousFrames.rtsAddress(seg, p);
        it.rkey = RendezvousFrames.rtsRkey(seg, p);
        it.token = RendezvousFrames.rtsToken(seg, p);
        send.startRead(it);
        if (it.buffer == null && endpoint.isOpen()) {
            it.receiveBuffer = buffer.retain();
            it.hold = current;
            holds.hold(current);
        }
    }

    /** Hands core every frame at the head of the queue that is complete (after READ completions). */
    void deliverReady() {
        Item it;
        while ((it = queue.peek()) != null && endpoint.isOpen()) {
            if (it.kind == InboundQueue.READ) {
                if (it.buffer == null || it.postedBytes < it.length || it.readsPending > 0) {
                    return;
                }
                send.sendFin(it.streamId, it.token);
                RdmaMetrics.RENDEZVOUS_READS.increment();
                RdmaMetrics.RENDEZVOUS_READ_BYTES.add(it.length);
                SlabBuffer dest = it.buffer;
                it.buffer = null;
                int capacity = dest.capacity();
                try {
                    deliver(it.type, it.flags, it.streamId, 0, dest, 0, it.length);
                } finally {
                    dest.release();
                    queue.pop();
                    send.readDelivered(capacity);
                }
            } else {
                SlabBuffer b = it.buffer;
                int hold = it.hold;
                it.buffer = null;
                try {
                    deliver(it.type, it.flags, it.streamId, it.credit, b, it.offset + FrameHeader.SIZE, it.length);
                } finally {
                    queue.pop();
                    b.release();
                    if (holds.drop(hold)) {
                        send.receivesDone(1); // the last of that SEND to wait here
                    }
                }
            }
        }
    }

    /**
     * Hands core one frame whose payload is {@code length} bytes of {@code holder} at {@code offset} (no slice); core
     * may keep a reference to the holder, this side's own reference is released by the caller as before.
     */
    private void deliver(int type, int flags, int streamId, int credit, SlabBuffer holder, long offset, int length) {
        try {
            endpoint.beforeFrame();
            boolean kept = handler.onFrame(type, flags, streamId, credit, holder, offset, length);
            if (type == FrameType.MESSAGE) {
                (kept ? RdmaMetrics.MESSAGE_FRAMES_KEPT : RdmaMetrics.MESSAGE_FRAMES_COPIED).increment();
            }
        } catch (RuntimeException e) {
            endpoint.closeOnError(e);
        }
    }

    /** Teardown, after the QP is destroyed: frees queued frames and READ destinations. */
    void releaseAll() {
        queue.releaseAll();
    }
}
