package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;

/**
 * Frames received on one connection that cannot be handed to core yet because an earlier rendezvous frame is still
 * being read: a FIFO of reusable items (a received frame, kept in its receive buffer, or an RDMA READ into a slab).
 * Core sees every frame in the order the peer sent it. Poller thread only; grows only under load.
 */
final class InboundQueue {
    /** A received frame that waits in its receive buffer. */
    static final int FRAME = 1;
    /** A frame whose payload an RDMA READ is pulling into {@link Item#buffer}. */
    static final int READ = 2;

    /** One queued frame. */
    static final class Item {
        int kind;
        /** FRAME: the receive buffer (one reference); READ: the destination. */
        SlabBuffer buffer;
        /** FRAME: offset of the frame header in the buffer. */
        int offset;
        int type;
        int flags;
        int streamId;
        int credit;
        int length;
        /** READ: the peer's buffer, rkey, the token to echo in FIN, bytes posted so far, READ WRs not yet completed. */
        long remoteAddress;
        int rkey;
        int token;
        int postedBytes;
        int readsPending;
        /** READ: the receive buffer of the SEND that carried the RTS, held (with the peer's credit) until posted. */
        SlabBuffer receiveBuffer;
        /**
         * FRAME, and READ while {@link #receiveBuffer} is set: the {@link ReceiveHolds} id of the SEND this item holds
         * (its credit is returned when the last hold is dropped).
         */
        int hold;

        void clear() {
            buffer = null;
            kind = 0;
            readsPending = 0;
            postedBytes = 0;
            receiveBuffer = null;
        }
    }

    private Item[] items = newItems(16);
    private long head;
    private long tail;

    private static Item[] newItems(int n) {
        Item[] a = new Item[n];
        for (int i = 0; i < n; i++) {
            a[i] = new Item();
        }
        return a;
    }

    boolean isEmpty() {
        return head == tail;
    }

    /** The oldest item, or null. */
    Item peek() {
        return head == tail ? null : items[(int) (head & (items.length - 1))];
    }

    /** Appends a cleared item and returns it. */
    Item push(int kind) {
        if (tail - head == items.length) {
            Item[] grown = new Item[items.length * 2];
            for (long s = head; s < tail; s++) {
                grown[(int) (s & (grown.length - 1))] = items[(int) (s & (items.length - 1))];
            }
            for (int i = 0; i < grown.length; i++) {
                if (grown[i] == null) {
                    grown[i] = new Item();
                }
            }
            items = grown;
        }
        Item it = items[(int) (tail & (items.length - 1))];
        tail++;
        it.kind = kind;
        return it;
    }

    /** Removes the oldest item (the caller has dealt with its buffer). */
    void pop() {
        items[(int) (head & (items.length - 1))].clear();
        head++;
    }

    /** Teardown, after the queue pair is gone: frees every queued buffer; returns how many receive buffers were freed. */
    void releaseAll() {
        while (head != tail) {
            Item it = items[(int) (head & (items.length - 1))];
            if (it.buffer != null) {
                it.buffer.release();
            }
            if (it.receiveBuffer != null) {
                it.receiveBuffer.release();
            }
            pop();
        }
    }
}
