package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.RegisteredMemory;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;

import java.util.ArrayDeque;

/**
 * The receive side's RDMA READs of one connection, bounded: an RTS waits here, holding no memory, until its READ can
 * be posted; only then is its destination allocated from the slab pool. At most {@link #MAX_READS} rendezvous and
 * {@link #MAX_READ_BYTES} bytes of destinations are held at once per connection (a single rendezvous larger than
 * that is read alone), from the allocation until core has been handed the frame ({@link #delivered}). So what one
 * connection holds for receiving is at most {@code max(MAX_READ_BYTES, max frame payload)} (in slab blocks) plus
 * the shared receive queue's fixed buffers. RTSs are read in arrival order. An RTS that waits keeps its receive
 * buffer and holds its SEND ({@link ReceiveHolds}, so the peer's credit for it) until its READ is posted, which bounds
 * how many can wait. Once the frame is handed to core the destination leaves the budget even if core keeps it (then
 * it is the message's buffer, counted against the stream's window like any received message).
 * Poller thread, under the send path's lock (READs are posted on the send queue).
 */
final class RendezvousReads {
    /** Rendezvous per connection whose destinations are allocated at once. */
    static final int MAX_READS = 8;
    /** Bytes of rendezvous destinations per connection allocated at once (unless one alone is larger). */
    static final int MAX_READ_BYTES = 4 << 20;

    private final SlabPool pool;
    /** Which device context's memory regions this path uses (see MemoryRegistry). */
    private final int device;
    private final int readChunk;
    private final ArrayDeque<InboundQueue.Item> waiting = new ArrayDeque<>();
    private int active;
    private long activeBytes;
    private long peakBytes;
    private int creditsFreed;
    /** Which of the peer's SENDs this connection still holds (shared with the receive path). */
    private final ReceiveHolds holds = new ReceiveHolds();

    RendezvousReads(SlabPool pool, int readChunk, int device) {
        this.device = device;
        this.pool = pool;
        this.readChunk = readChunk;
    }

    /** Queues the READ of an RTS ({@link InboundQueue.Item#buffer} still null). */
    void add(InboundQueue.Item it) {
        waiting.add(it);
    }

    /** Whether READs wait for the budget or for send-queue room. */
    boolean hasWaiting() {
        return !waiting.isEmpty();
    }

    /** Rendezvous whose destinations are held now. */
    int active() {
        return active;
    }

    /** Bytes of destinations held now (slab blocks). */
    long activeBytes() {
        return activeBytes;
    }

    /** The most bytes of destinations this connection has held at once. */
    long peakBytes() {
        return peakBytes;
    }

    /** The peer's SENDs this connection still holds: an RTS waiting here holds its SEND until its READ is posted. */
    ReceiveHolds holds() {
        return holds;
    }

    /** SENDs whose last hold was an RTS admitted since the last call (credits now owed to the peer). */
    int takeCreditsFreed() {
        int n = creditsFreed;
        creditsFreed = 0;
        return n;
    }

    /**
     * Posts what the budget and the send queue allow, oldest first: allocates a destination when its rendezvous is
     * admitted, then its READ work requests in chunks of at most the port's {@code max_msg_sz}.
     */
    void post(SendSlots slots, SendWorkRequest wr) {
        InboundQueue.Item it;
        while ((it = waiting.peek()) != null && slots.hasRoom()) {
            if (it.buffer == null && !admit(it)) {
                return;
            }
            RegisteredMemory mr = MemoryRegistry.registered(it.buffer, device);
            if (mr == null) {
                throw new IllegalStateException("a rendezvous destination's slab is not registered for RDMA");
            }
            while (it.postedBytes < it.length && slots.hasRoom()) {
                int n = Math.min(readChunk, it.length - it.postedBytes);
                wr.clear().wrId(slots.nextWrId()).opcode(SendWorkRequest.OPCODE_RDMA_READ).flags(slots.signaled())
                        .remote(it.remoteAddress + it.postedBytes, it.rkey)
                        .sge(0, it.buffer.address() + it.postedBytes, n, mr.lkey());
                slots.post(wr, SendSlots.READ, it, null);
                it.postedBytes += n;
                it.readsPending++;
            }
            if (it.postedBytes < it.length) {
                return;
            }
            waiting.poll();
        }
    }

    private boolean admit(InboundQueue.Item it) {
        if (active >= MAX_READS || (active > 0 && activeBytes + blockSize(it.length) > MAX_READ_BYTES)) {
            return false;
        }
        SlabBuffer dest = pool.allocate(it.length);
        it.buffer = dest;
        active++;
        activeBytes += dest.capacity();
        peakBytes = Math.max(peakBytes, activeBytes);
        RdmaMetrics.recordReadBytesHeld(activeBytes);
        SlabBuffer received = it.receiveBuffer;
        if (received != null) {
            it.receiveBuffer = null;
            received.release();
            if (holds.drop(it.hold)) {
                creditsFreed++;
            }
        }
        return true;
    }

    /**
     * The slab block a destination of {@code length} bytes takes at most: the pool's size classes are powers of two,
     * so the next power of two.
     */
    static long blockSize(int length) {
        return length <= 1 ? 1 : Long.highestOneBit(length - 1L) << 1;
    }

    /** A READ's frame was handed to core and its destination released: frees its share of the budget. */
    void delivered(int capacity) {
        active--;
        activeBytes -= capacity;
    }

    /** Teardown: forgets the waiting READs (the inbound queue frees their buffers). */
    void clear() {
        waiting.clear();
    }
}
