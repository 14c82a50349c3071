package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;
import dev.rdmarpc.transport.rdma.verbs.ReceiveWorkRequest;
import dev.rdmarpc.transport.rdma.verbs.SharedReceiveQueue;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;

/**
 * The device's shared receive queue, kept full of slab buffers: one slot per posted receive, {@code wr_id} = slot.
 * The poller reposts a buffer as soon as its frames are handled (or a fresh one when frames of it are still queued);
 * the SRQ-limit event refills what could not be posted. Poller thread only.
 */
final class ReceiveQueue {
    private final SharedReceiveQueue srq;
    private final SlabPool pool;
    /** Which device context's memory regions this path uses (see MemoryRegistry). */
    private final int device;
    private final int bufferSize;
    private final int depth;
    private final int limit;
    private final SlabBuffer[] slots;
    private final ReceiveWorkRequest wr;
    private int posted;

    ReceiveQueue(SharedReceiveQueue srq, SlabPool pool, int bufferSize, int depth, Arena arena, int device) {
        this.device = device;
        this.srq = srq;
        this.pool = pool;
        this.bufferSize = bufferSize;
        this.depth = depth;
        this.limit = Math.max(1, depth / 4);
        this.slots = new SlabBuffer[depth];
        this.wr = new ReceiveWorkRequest(arena, 1);
    }

    int depth() {
        return depth;
    }

    int posted() {
        return posted;
    }

    int bufferSize() {
        return bufferSize;
    }

    /** Posts a fresh buffer into every empty slot; returns how many were posted. */
    int fill() {
        int n = 0;
        for (int i = 0; i < depth; i++) {
            if (slots[i] == null) {
                SlabBuffer b = pool.allocate(bufferSize);
                if (!post(i, b)) {
                    b.release();
                    break;
                }
                n++;
            }
        }
        return n;
    }

    /** Arms the SRQ limit: one async event when fewer than a quarter of the receives remain. */
    void armLimit() {
        srq.armLimit(limit);
    }

    /** The buffer of a completed receive; the slot is empty until {@link #repost} or {@link #fill}. */
    SlabBuffer take(int slot) {
        SlabBuffer b = slots[slot];
        slots[slot] = null;
        posted--;
        RdmaMetrics.postedReceives(posted);
        return b;
    }

    /** Puts {@code buffer} (this queue's reference) back into {@code slot}, or frees it if it cannot be posted. */
    void repost(int slot, SlabBuffer buffer) {
        if (!post(slot, buffer)) {
            buffer.release();
        }
    }

    /** Posts a new buffer into {@code slot} (the old one is kept by the frames queued from it). */
    void refill(int slot) {
        SlabBuffer b = pool.allocate(bufferSize);
        if (!post(slot, b)) {
            b.release();
        }
    }

    private boolean post(int slot, SlabBuffer b) {
        MemoryRegion mr = MemoryRegistry.region(b, device);
        if (mr == null) {
            return false;
        }
        wr.clear().wrId(slot).sge(0, b.address(), bufferSize, mr.lkey());
        int errno = srq.tryPostRecv(wr);
        if (errno != 0) {
            Fallbacks.LOG.log(Level.WARNING, "ibv_post_srq_recv failed: errno {0}", errno);
            return false;
        }
        slots[slot] = b;
        posted++;
        RdmaMetrics.SRQ_POSTS.increment();
        RdmaMetrics.postedReceives(posted);
        return true;
    }

    /** After the SRQ is destroyed: frees every buffer still in a slot. */
    void releaseAll() {
        for (int i = 0; i < depth; i++) {
            if (slots[i] != null) {
                slots[i].release();
                slots[i] = null;
            }
        }
        posted = 0;
        RdmaMetrics.postedReceives(0);
    }
}
