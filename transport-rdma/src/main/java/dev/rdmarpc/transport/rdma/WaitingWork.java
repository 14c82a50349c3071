package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.transport.rdma.RendezvousGrants.Grant;

/**
 * Work a connection could not post yet (no credit, no send-queue slot, or a local work request waiting for an empty
 * send queue), in the order it must be posted: a ring of entries with a kind and named fields, reused, that grows
 * only under load. Kinds: {@link #SEND} (a staged buffer of whole frames), {@link #SEND_GATHER} (one frame sent from
 * core's own buffers: a 16-byte header and a payload), {@link #BIND} and {@link #INVALIDATE} (a rendezvous window).
 * Counts the bytes it holds ({@link #bytes()}). Guarded by the send path's lock.
 */
final class WaitingWork {
    static final byte SEND = 1;
    static final byte SEND_GATHER = 2;
    static final byte BIND = 3;
    static final byte INVALIDATE = 4;

    private byte[] kinds = new byte[16];
    private Object[] refs = new Object[16];
    private Object[] refs2 = new Object[16];
    private long[] offsets = new long[16];
    private long[] offsets2 = new long[16];
    private int[] lengths = new int[16];
    private long head;
    private long tail;
    private long bytes;

    /** Whether nothing waits. */
    boolean isEmpty() {
        return head == tail;
    }

    /** Bytes of frames (and payloads) held by waiting sends. */
    long bytes() {
        return bytes;
    }

    /** Kind of the oldest entry, or 0 when empty. */
    byte peekKind() {
        return head == tail ? 0 : kinds[index(head)];
    }

    /** SEND: the staged buffer; SEND_GATHER: the buffer holding the header; BIND, INVALIDATE: the grant. */
    Object peekRef() {
        return refs[index(head)];
    }

    /** SEND_GATHER: the buffer holding the payload. */
    SlabBuffer peekPayload() {
        return (SlabBuffer) refs2[index(head)];
    }

    /** SEND_GATHER: offset of the header in {@link #peekRef()}. */
    long peekHeaderOffset() {
        return offsets[index(head)];
    }

    /** SEND_GATHER: offset of the payload in {@link #peekPayload()}. */
    long peekPayloadOffset() {
        return offsets2[index(head)];
    }

    /** SEND_GATHER: payload length. */
    int peekPayloadLength() {
        return lengths[index(head)] - FrameHeader.SIZE;
    }

    /** Adds a staged buffer (owned by the queue until polled). */
    void addSend(SlabBuffer staged) {
        int i = push(SEND);
        refs[i] = staged;
        lengths[i] = staged.length();
        bytes += staged.length();
    }

    /** Adds one frame sent from core's buffers: header at {@code hoff} of {@code header}, payload in {@code payload}. */
    void addGather(SlabBuffer header, long hoff, SlabBuffer payload, long poff, int length) {
        int i = push(SEND_GATHER);
        refs[i] = header;
        refs2[i] = payload;
        offsets[i] = hoff;
        offsets2[i] = poff;
        lengths[i] = FrameHeader.SIZE + length;
        bytes += FrameHeader.SIZE + length;
    }

    /** Adds the BIND_MW of a grant. */
    void addBind(Grant g) {
        int i = push(BIND); // before naming the array: push may grow it
        refs[i] = g;
    }

    /** Adds the LOCAL_INV of a grant. */
    void addInvalidate(Grant g) {
        int i = push(INVALIDATE);
        refs[i] = g;
    }

    /** Removes the oldest entry (its references now belong to the caller). */
    void poll() {
        int i = index(head);
        if (kinds[i] == SEND || kinds[i] == SEND_GATHER) {
            bytes -= lengths[i];
        }
        kinds[i] = 0;
        refs[i] = null;
        refs2[i] = null;
        head++;
    }

    /** Removes the BIND of {@code g} if it still waits; returns whether it did. */
    boolean removeBind(Grant g) {
        for (long s = head; s < tail; s++) {
            int i = index(s);
            if (kinds[i] == BIND && refs[i] == g) {
                for (long t = s; t + 1 < tail; t++) {
                    move(index(t + 1), index(t));
                }
                tail--;
                int last = index(tail);
                kinds[last] = 0;
                refs[last] = null;
                refs2[last] = null;
                return true;
            }
        }
        return false;
    }

    /** Teardown: releases every waiting buffer, and ends grants waiting for their LOCAL_INV. */
    void releaseAll(RendezvousGrants grants) {
        while (head != tail) {
            int i = index(head);
            switch (kinds[i]) {
                case SEND -> ((SlabBuffer) refs[i]).release();
                case SEND_GATHER -> {
                    ((SlabBuffer) refs[i]).release();
                    ((SlabBuffer) refs2[i]).release();
                }
                case INVALIDATE -> grants.release((Grant) refs[i]); // taken by a FIN
                default -> {
                } // BIND: the grant is still in the table; releaseAll of the grants ends it
            }
            poll();
        }
        bytes = 0;
    }

    private int index(long seq) {
        return (int) (seq & (kinds.length - 1));
    }

    private void move(int from, int to) {
        kinds[to] = kinds[from];
        refs[to] = refs[from];
        refs2[to] = refs2[from];
        offsets[to] = offsets[from];
        offsets2[to] = offsets2[from];
        lengths[to] = lengths[from];
    }

    private int push(byte kind) {
        if (tail - head == kinds.length) {
            grow();
        }
        int i = index(tail);
        tail++;
        kinds[i] = kind;
        return i;
    }

    private void grow() {
        int n = kinds.length * 2;
        byte[] k = new byte[n];
        Object[] r = new Object[n];
        Object[] r2 = new Object[n];
        long[] o = new long[n];
        long[] o2 = new long[n];
        int[] l = new int[n];
        for (long s = head; s < tail; s++) {
            int from = index(s);
            int to = (int) (s & (n - 1));
            k[to] = kinds[from];
            r[to] = refs[from];
            r2[to] = refs2[from];
            o[to] = offsets[from];
            o2[to] = offsets2[from];
            l[to] = lengths[from];
        }
        kinds = k;
        refs = r;
        refs2 = r2;
        offsets = o;
        offsets2 = o2;
        lengths = l;
    }
}
