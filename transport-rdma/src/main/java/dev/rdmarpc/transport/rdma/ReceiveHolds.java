package dev.rdmarpc.transport.rdma;

/**
 * Which of the peer's SENDs this side is not finished with yet, and so owes no receive credit for: a SEND is held
 * while its frames are being handled, once more for each of its frames waiting in the {@link InboundQueue}, and once
 * more for each of its RTSs waiting for their READ. Its credit is due when its last hold is dropped, however long
 * core keeps bytes of its receive buffer afterwards (a frame core keeps costs memory, bounded by the stream's window,
 * never a credit: the shared receive queue gets a fresh buffer in its place). Ids are reused once free, so the table
 * is as large as the most SENDs held at once (at most the credits granted to the peer, plus the one being handled).
 * Poller thread only; allocates only to grow.
 */
final class ReceiveHolds {
    private int[] holds = new int[16];
    private int[] free = new int[16];
    private int freeCount;
    private int created;

    /** A SEND arrived: returns its id, held once by whoever handles its frames. */
    int open() {
        int id;
        if (freeCount > 0) {
            id = free[--freeCount];
        } else {
            if (created == holds.length) {
                holds = java.util.Arrays.copyOf(holds, created * 2);
                free = java.util.Arrays.copyOf(free, created * 2);
            }
            id = created++;
        }
        holds[id] = 1;
        return id;
    }

    /** One more hold on SEND {@code id}. */
    void hold(int id) {
        holds[id]++;
    }

    /** Drops one hold on SEND {@code id}; returns true when it was the last (the SEND's credit is now due). */
    boolean drop(int id) {
        int left = --holds[id];
        if (left < 0) {
            throw new IllegalStateException("SEND " + id + " released more often than held");
        }
        if (left > 0) {
            return false;
        }
        free[freeCount++] = id;
        return true;
    }

    /** SENDs held now (for tests). */
    int held() {
        return created - freeCount;
    }
}
