package dev.rdmarpc.core.spi;

import java.lang.foreign.MemorySegment;

/**
 * Core's side of a {@link FrameConnection}: receives its frames, one at a time, on the
 * connection's I/O thread.
 */
public interface FrameHandler {

    /**
     * One whole frame whose header the transport has already checked with
     * {@link dev.rdmarpc.core.protocol.FrameHeader#validate}. {@code payload} is only valid
     * during this call. Throwing (e.g. a {@link dev.rdmarpc.core.protocol.ProtocolException})
     * makes the transport close this connection with the exception's message as the reason.
     */
    void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload);

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
