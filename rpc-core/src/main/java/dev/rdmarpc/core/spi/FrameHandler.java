package dev.rdmarpc.core.spi;

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
