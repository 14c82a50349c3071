package dev.rdmarpc.core.spi;

import dev.rdmarpc.core.buffer.SlabBuffer;

import java.lang.foreign.MemorySegment;

/**
 * Core's side of a {@link FrameConnection}: receives its frames, one at a time, on the
 * connection's I/O thread. A transport never calls the handler from inside one of the handler's own calls into the
 * connection (a send, a flush, a close): its caller may hold locks of its own, so what such a call causes (the
 * connection turning writable, say) reaches the handler after it returned.
 */
public interface FrameHandler {

    /**
     * One whole frame whose header the transport has already checked with
     * {@link dev.rdmarpc.core.protocol.FrameHeader#validate}. {@code payload} is only valid
     * during this call. Throwing (e.g. a {@link dev.rdmarpc.core.protocol.ProtocolException})
     * makes the transport close this connection with the exception's message as the reason.
     */
    void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload);

    /**
     * The same frame with its payload given as {@code length} bytes of {@code memory} at {@code offset}, so that a
     * transport need not make a slice per frame; {@code memory} may be larger than the payload (even the whole
     * address space), and is valid only during this call. The default slices and calls the other form.
     */
    default void onFrame(int type, int flags, int streamId, int credit, MemorySegment memory, long offset, int length) {
        onFrame(type, flags, streamId, credit, memory.asSlice(offset, length));
    }

    /**
     * The same frame with its payload given as {@code length} bytes of {@code holder}'s block at {@code offset} (an
     * offset into {@link SlabBuffer#segment()}), offered by a transport that received it into a slab buffer of its
     * own, so that the handler may keep the bytes instead of copying them. Ownership is explicit: the transport keeps
     * its own reference and releases it after this call, as it would without this method; a handler that wants the
     * bytes past the call takes a reference of its own ({@link SlabBuffer#retain()} or
     * {@link SlabBuffer#retainedSlice(long, int)}), releases it when done, and returns true. A handler that keeps a
     * reference must bound what it keeps (a small frame pinning a large buffer multiplies memory), and the transport
     * must not tie anything but memory to the buffer's last release (a peer's receive credit, for one, is returned
     * when the call returns, not when the handler releases). {@code holder} must not be written to, nor released
     * more often than retained. The default calls the memory form with {@code holder.segment()} and keeps nothing.
     *
     * @return whether the handler kept a reference to {@code holder} (for the transport's counters; it changes
     * nothing the transport must do)
     */
    default boolean onFrame(int type, int flags, int streamId, int credit, SlabBuffer holder, long offset, int length) {
        onFrame(type, flags, streamId, credit, holder.segment(), offset, length);
        return false;
    }

    /**
     * The frames of one read are about to arrive (on the I/O thread, before the first of them): what the handler
     * hands off to other threads meanwhile may wait for {@link #onReadBurstEnd}, which the transport then calls, on
     * the same thread and the same handler, once the read is done, however it ended. A transport need not report
     * bursts at all; then neither is called.
     */
    default void onReadBurstStart() {
    }

    /** The read announced by {@link #onReadBurstStart} is done. */
    default void onReadBurstEnd() {
    }

    /** The connection became writable again after {@link FrameConnection#isWritable()} was false. */
    default void onWritable() {
    }

    /**
     * The connection is closed (by either side, an I/O error or a protocol error); called once.
     *
     * @param reason what happened, for logs and statuses
     * @param cause  the error, or null for an orderly close
     */
    void onClosed(String reason, Throwable cause);
}
