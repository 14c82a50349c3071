package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.transport.rdma.InboundQueue.Item;

import java.lang.foreign.MemorySegment;

/**
 * One connection's receive side, on the poller thread: checks every frame of a received SEND
 * ({@link FrameHeader#validate}), takes the receive credits its headers carry, hands frames to core's
 * {@link FrameHandler} (payload = bytes of the receive buffer, valid during the call, given without a slice), answers an RTS with RDMA READs
 * into a slab of its own (allocated when the READ is posted, within the connection's read budget:
 * {@link RendezvousReads}) and, once read, a FIN and a normal frame for core, and passes FIN to the send side. While
 * a READ waits or is in flight later frames wait in an {@link InboundQueue}, so core sees them in order.
 */
final class ReceivePath {
    private final RdmaEndpoint endpoint;
    private final SendPath send;
    private final FrameHandler handler;
    private final SlabPool pool;
    private final InboundQueue queue = new InboundQueue();

    ReceivePath(RdmaEndpoint endpoint, SendPath send, FrameHandler handler, SlabPool pool) {
        this.endpoint = endpoint;
        this.send = send;
        this.handler = handler;
        this.pool = pool;
    }

    /**
     * Handles one received SEND of {@code length} bytes in {@code buffer}.
     *
     * @return true if frames of it were queued (they hold references to the buffer); false if it is free to repost
     * @throws ProtocolException when a frame is malformed (the caller closes the connection)
     */
    boolean onReceive(SlabBuffer buffer, int length) {
        RdmaMetrics.RECEIVES.increment();
        RdmaMetrics.RECEIVE_BYTES.add(length);
        MemorySegment seg = buffer.segment();
        int maxPayload = endpoint.maxInboundPayload();
        int off = 0;
        int credits = 0;
        boolean retained = false;
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
                            if (len != 0) {
                                throw new ProtocolException("a credit frame (WINDOW on stream 0) with a payload");
                            }
                        } else {
                            retained |= frame(buffer, off, type, flags, streamId, coreCredit, len);
                        }
                    }
                    case FrameType.RTS -> retained |= rts(buffer, off, streamId, maxPayload);
                    case FrameType.FIN -> {
                        if (len != RendezvousFrames.FIN_SIZE) {
                            throw new ProtocolException("FIN on stream " + streamId + " has a " + len + "-byte payload, not "
                                    + RendezvousFrames.FIN_SIZE);
                        }
                        send.onFin(RendezvousFrames.finToken(seg, off + FrameHeader.SIZE), streamId);
                    }
                    default -> retained |= frame(buffer, off, type, flags, streamId, coreCredit, len);
                }
                off += FrameHeader.SIZE + len;
            }
        } finally {
            if (credits > 0 && endpoint.isOpen()) {
                send.onCredits(credits);
            }
        }
        return retained;
    }

    /** A frame for core: now, or behind a rendezvous still being read. Returns true if it was queued. */
    private boolean frame(SlabBuffer buffer, int off, int type, int flags, int streamId, int credit, int len) {
        if (queue.isEmpty()) {
            deliver(type, flags, streamId, credit, buffer.segment(), off + FrameHeader.SIZE, len);
            return false;
        }
        Item it = queue.push(InboundQueue.FRAME);
        it.buffer = buffer.retain();
        it.offset = off;
        it.type = type;
        it.flags = flags;
        it.streamId = streamId;
        it.credit = credit;
        it.length = len;
        return true;
    }

    /**
     * An RTS: checked, then queued for its READ. Its destination is allocated only when the READ is posted, within the
     * connection's read budget; until then it keeps the receive buffer (and the peer's credit). Returns true if it
     * did.
     */
    private boolean rts(SlabBuffer buffer, int off, int streamId, int maxPayload) {
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
            return true;
        }
        return false;
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
                    deliver(it.type, it.flags, it.streamId, 0, dest.segment(), 0, it.length);
                } finally {
                    dest.release();
                    queue.pop();
                    send.readDelivered(capacity);
                }
            } else {
                SlabBuffer b = it.buffer;
                it.buffer = null;
                try {
                    deliver(it.type, it.flags, it.streamId, it.credit, b.segment(), it.offset + FrameHeader.SIZE,
                            it.length);
                } finally {
                    queue.pop();
                    if (b.release()) {
                        send.receivesDone(1); // the last queued frame of that SEND
                    }
                }
            }
        }
    }

    /** Hands core one frame whose payload is {@code length} bytes of {@code memory} at {@code offset} (no slice). */
    private void deliver(int type, int flags, int streamId, int credit, MemorySegment memory, long offset, int length) {
        try {
            handler.onFrame(type, flags, streamId, credit, memory, offset, length);
        } catch (RuntimeException e) {
            endpoint.closeOnError(e);
        }
    }

    /** Teardown, after the QP is destroyed: frees queued frames and READ destinations. */
    void releaseAll() {
        queue.releaseAll();
    }
}
