package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabBuffer;

/**
 * The whole messages of one stream waiting for the application, oldest first, each with what {@link InboundMessages}
 * must settle when it is taken: the receive-window credit deferred for it, what it was charged to the connection's
 * window, whether it arrived compressed, where its attachment begins in its buffer (-1: none) and its attachment kept
 * apart (or null). The oldest message is held in fields of its own; those behind it go in a ring of parallel arrays,
 * made when a second message has to wait and let go once drained if it grew past {@link #KEPT_SLOTS}, so a queue
 * that held a burst shrinks back. Not thread-safe: the owning stream locks.
 */
final class MessageQueue {
    /** Slots of the ring kept once it is empty again; a larger ring is let go when drained. */
    static final int KEPT_SLOTS = 64;

    /** The oldest whole message waiting for the application and what goes with it; null when none waits. */
    private SlabBuffer first;
    private int firstCredit;
    private int firstCharge;
    private boolean firstCompressed;
    private int firstSplit;
    private SlabBuffer firstAttachment;
    /** Messages queued behind {@link #first}, with what goes with each: one ring in parallel arrays. */
    private SlabBuffer[] later;
    private int[] laterCredit;
    private int[] laterCharge;
    private boolean[] laterCompressed;
    private int[] laterSplit;
    private SlabBuffer[] laterAttachment;
    private int laterHead;
    private int laterCount;

    /** What went with the message {@link #poll} returned last. */
    private int polledCredit;
    private int polledCharge;
    private boolean polledCompressed;
    private int polledSplit = -1;
    private SlabBuffer polledAttachment;

    /** Queues a whole message (the queue owns it and its attachment until polled) and what goes with it. */
    void add(SlabBuffer message, int credit, int charge, boolean compressed, int split, SlabBuffer attachment) {
        if (first == null) {
            first = message;
            firstCredit = credit;
            firstCharge = charge;
            firstCompressed = compressed;
            firstSplit = split;
            firstAttachment = attachment;
            return;
        }
        if (later == null || laterCount == later.length) {
            grow();
        }
        int i = (laterHead + laterCount) % later.length;
        later[i] = message;
        laterCredit[i] = credit;
        laterCharge[i] = charge;
        laterCompressed[i] = compressed;
        laterSplit[i] = split;
        laterAttachment[i] = attachment;
        laterCount++;
    }

    private void grow() {
        int n = later == null ? 4 : later.length * 2;
        SlabBuffer[] buffers = new SlabBuffer[n];
        int[] credits = new int[n];
        int[] charges = new int[n];
        boolean[] flags = new boolean[n];
        int[] splits = new int[n];
        SlabBuffer[] attachments = new SlabBuffer[n];
        for (int k = 0; k < laterCount; k++) {
            int i = (laterHead + k) % later.length;
            buffers[k] = later[i];
            credits[k] = laterCredit[i];
            charges[k] = laterCharge[i];
            flags[k] = laterCompressed[i];
            splits[k] = laterSplit[i];
            attachments[k] = laterAttachment[i];
        }
        laterSplit = splits;
        laterAttachment = attachments;
        later = buffers;
        laterCredit = credits;
        laterCharge = charges;
        laterCompressed = flags;
        laterHead = 0;
    }

    /** Whole messages waiting. */
    int size() {
        return first == null ? 0 : 1 + laterCount;
    }

    boolean isEmpty() {
        return first == null;
    }

    /**
     * Takes the oldest message (the caller owns it, and its {@link #polledAttachment}), or null when none waits; what
     * went with it is read from the {@code polled...} methods until the next poll.
     */
    SlabBuffer poll() {
        SlabBuffer b = first;
        if (b == null) {
            return null;
        }
        polledCredit = firstCredit;
        polledCharge = firstCharge;
        polledCompressed = firstCompressed;
        polledSplit = firstSplit;
        polledAttachment = firstAttachment;
        firstAttachment = null;
        if (laterCount > 0) {
            first = later[laterHead];
            firstCredit = laterCredit[laterHead];
            firstCharge = laterCharge[laterHead];
            firstCompressed = laterCompressed[laterHead];
            firstSplit = laterSplit[laterHead];
            firstAttachment = laterAttachment[laterHead];
            later[laterHead] = null;
            laterAttachment[laterHead] = null;
            laterHead = (laterHead + 1) % later.length;
            laterCount--;
        } else {
            first = null;
        }
        if (laterCount == 0 && later != null && later.length > KEPT_SLOTS) {
            dropRing(); // drained after a burst: the queue shrinks back instead of keeping its peak for the stream's life
        }
        return b;
    }

    /** The receive-window credit deferred for the message {@link #poll} returned last. */
    int polledCredit() {
        return polledCredit;
    }

    /** What the message {@link #poll} returned last was charged to the connection's window. */
    int polledCharge() {
        return polledCharge;
    }

    /** Whether the message {@link #poll} returned last arrived compressed. */
    boolean polledCompressed() {
        return polledCompressed;
    }

    /** Where the message {@link #poll} returned last ends and its attachment begins, or -1. */
    int polledSplit() {
        return polledSplit;
    }

    /** The attachment kept apart of the message {@link #poll} returned last, or null. */
    SlabBuffer polledAttachment() {
        return polledAttachment;
    }

    /** Lets the ring go (it is empty); the next message that must wait starts a small one again. */
    private void dropRing() {
        later = null;
        laterCredit = null;
        laterCharge = null;
        laterCompressed = null;
        laterSplit = null;
        laterAttachment = null;
        laterHead = 0;
    }

    /** Slots of the ring (0 when it has none), for tests. */
    int ringCapacity() {
        return later == null ? 0 : later.length;
    }

    /** Frees every waiting message and attachment; returns what they were charged to the connection's window. */
    long releaseAll() {
        long charged = 0;
        if (first != null) {
            first.release();
            first = null;
            charged += firstCharge;
        }
        if (firstAttachment != null) {
            firstAttachment.release();
            firstAttachment = null;
        }
        for (; laterCount > 0; laterCount--) {
            charged += laterCharge[laterHead];
            later[laterHead].release();
            later[laterHead] = null;
            if (laterAttachment[laterHead] != null) {
                laterAttachment[laterHead].release();
                laterAttachment[laterHead] = null;
            }
            laterHead = (laterHead + 1) % later.length;
        }
        laterHead = 0;
        return charged;
    }

    /** Frees what waits and returns to the state of a new queue, keeping a ring of up to {@link #KEPT_SLOTS} slots. */
    long reset() {
        long charged = releaseAll();
        if (later != null && later.length > KEPT_SLOTS) {
            dropRing();
        }
        firstCredit = 0;
        firstCharge = 0;
        firstCompressed = false;
        firstSplit = 0;
        polledCredit = 0;
        polledCharge = 0;
        polledCompressed = false;
        polledSplit = -1;
        polledAttachment = null;
        return charged;
    }
}
