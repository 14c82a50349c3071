package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.transport.rdma.verbs.SendQueueTarget;
import dev.rdmarpc.transport.rdma.verbs.SendWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.VerbsException;

/**
 * One queue pair's send queue as a ring of slots, one per posted work request, numbered by a sequence that is also
 * the low half of the work request id (the high half names the connection). Each slot remembers its kind and what
 * to release when it completes; a signaled completion completes every earlier slot too (unsignaled work requests
 * finished before it). One slot always stays free for the teardown's drain marker. Where every work request must be
 * signaled (devices that replay local work requests), {@link #signalFlag()} signals each one. Guarded by the send
 * path's lock.
 */
final class SendSlots {
    static final byte NONE = 0;
    static final byte INLINE = 1;
    static final byte SEND = 2;
    static final byte READ = 3;
    static final byte BIND = 4;
    static final byte INVALIDATE = 5;
    static final byte DRAIN = 6;
    /** A SEND whose scatter/gather entries point into core's buffers: both references are released on completion. */
    static final byte SEND_GATHER = 7;

    /** What a completed slot held. */
    interface Completed {
        /** Slot {@code kind} completed; {@code ref}/{@code ref2} are what it remembered (null when nothing). */
        void completed(byte kind, Object ref, Object ref2);
    }

    private final SendQueueTarget qp;
    private final long wrIdBase;
    private final int depth;
    private final int mask;
    private final int signalEvery;
    private final byte[] kinds;
    private final Object[] refs;
    private final Object[] refs2;
    private int posted;
    private int completed;
    private int unsignaled;

    /**
     * @param depth        send queue depth (a power of two)
     * @param allSignaled  whether every work request must be signaled
     */
    SendSlots(SendQueueTarget qp, int endpointId, int depth, boolean allSignaled) {
        if (Integer.bitCount(depth) != 1 || depth < 4) {
            throw new IllegalArgumentException("send queue depth " + depth + " is not a power of two >= 4");
        }
        this.qp = qp;
        this.wrIdBase = (long) endpointId << 32;
        this.depth = depth;
        this.mask = depth - 1;
        this.signalEvery = allSignaled ? 1 : Math.max(1, depth / 8);
        this.kinds = new byte[depth];
        this.refs = new Object[depth];
        this.refs2 = new Object[depth];
    }

    /** Whether another work request may be posted (one slot stays free for the drain marker). */
    boolean hasRoom() {
        return posted - completed < depth - 1;
    }

    /** Whether nothing posted is still outstanding. */
    boolean isEmpty() {
        return posted == completed;
    }

    /** Work requests posted and not yet completed. */
    int outstanding() {
        return posted - completed;
    }

    /** The work request id the next post gets. */
    long nextWrId() {
        return wrIdBase | (posted & 0xffffffffL);
    }

    /** {@code FLAG_SIGNALED} every {@code depth / 8} work requests (every one where all must be signaled), else 0. */
    int signalFlag() {
        if (++unsignaled >= signalEvery) {
            unsignaled = 0;
            return SendWorkRequest.FLAG_SIGNALED;
        }
        return 0;
    }

    /** The next work request is signaled anyway: restarts the count of unsignaled ones. */
    int signaled() {
        unsignaled = 0;
        return SendWorkRequest.FLAG_SIGNALED;
    }

    /** Posts {@code wr} (its id from {@link #nextWrId()}) into the next slot, remembering {@code ref}/{@code ref2}. */
    void post(SendWorkRequest wr, byte kind, Object ref, Object ref2) {
        int errno = qp.tryPostSend(wr);
        if (errno != 0) {
            throw new VerbsException("ibv_post_send(" + SendWorkRequest.opcodeName(wr.opcode()) + ") on qp "
                    + qp.qpNum(), errno);
        }
        int i = posted & mask;
        kinds[i] = kind;
        refs[i] = ref;
        refs2[i] = ref2;
        posted++;
    }

    /** Whether a completion of sequence {@code seq} names a slot still outstanding. */
    boolean isOutstanding(int seq) {
        return seq - completed >= 0 && seq - posted < 0;
    }

    /**
     * Completes every slot up to and including {@code seq}, oldest first, telling {@code to} what each held.
     *
     * @return the kind of slot {@code seq}
     */
    byte completeThrough(int seq, Completed to) {
        byte last = NONE;
        int end = seq + 1;
        while (completed != end) {
            last = completeOldest(to);
        }
        return last;
    }

    /** Teardown, after the queue pair is destroyed: tells {@code to} what every outstanding slot held. */
    void completeAll(Completed to) {
        while (completed != posted) {
            completeOldest(to);
        }
    }

    private byte completeOldest(Completed to) {
        int i = completed & mask;
        byte kind = kinds[i];
        Object ref = refs[i];
        Object ref2 = refs2[i];
        kinds[i] = NONE;
        refs[i] = null;
        refs2[i] = null;
        completed++;
        to.completed(kind, ref, ref2);
        return kind;
    }
}
