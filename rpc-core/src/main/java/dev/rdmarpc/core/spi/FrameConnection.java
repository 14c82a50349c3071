package dev.rdmarpc.core.spi;

import dev.rdmarpc.core.buffer.SlabBuffer;

import java.net.SocketAddress;

/**
 * One transport connection carrying frames to and from a peer. Frames go out in the order
 * {@link #send} is called; methods may be called from any thread.
 */
public interface FrameConnection {

    /**
     * Sends {@code head} then {@code tail} (may be null) back to back, with nothing of another
     * send in between. Each buffer's content is {@code [0, length())}; together they must form
     * whole frames. Takes ownership of both: they are released once written, or when the
     * connection fails. After close, buffers are released without being sent.
     *
     * @param flush whether to flush now; a send without flush waits for a later send with flush,
     *              {@link #flush()} or {@link #close}: transports never flush on their own, except what they
     *              hold past their high-water mark (see {@link #isWritable()})
     */
    void send(SlabBuffer head, SlabBuffer tail, boolean flush);

    /**
     * Whether {@link #send(SlabBuffer, java.lang.foreign.MemorySegment, Runnable, boolean)} sends memory that is not a
     * slab without copying it; when false, core copies such memory into a slab first.
     */
    default boolean sendsForeignMemory() {
        return false;
    }

    /**
     * Sends {@code head} then the bytes of {@code body}, native memory the transport does not own (an application's
     * attachment, possibly read-only), back to back; together they form whole frames. Takes ownership of {@code head}; {@code done} runs
     * exactly once when the transport no longer references {@code body}: once written, or when the connection fails or
     * is closed; it may run under the transport's locks (core's only counts a reference down and hands the
     * application's callback to an executor). Only called when {@link #sendsForeignMemory()} is true.
     */
    default void send(SlabBuffer head, java.lang.foreign.MemorySegment body, Runnable done, boolean flush) {
        head.release();
        done.run();
        throw new UnsupportedOperationException(transportName() + " does not send foreign memory");
    }

    /** Sends one buffer holding whole frames and flushes. */
    default void send(SlabBuffer frames) {
        send(frames, null, true);
    }

    /** Pushes out whatever was sent without flush. */
    void flush();

    /**
     * False while the transport's outbound buffer is above its high-water mark; the handler's
     * {@link FrameHandler#onWritable()} is called when it drains, with no further send or flush from core: a
     * sender told to wait for {@code onWritable} need not flush first.
     */
    boolean isWritable();

    /** Sets the largest frame payload accepted from the peer (after the HELLO exchange). */
    void setMaxInboundPayload(int maxPayload);

    /** Largest MESSAGE payload chunk this transport wants per frame. */
    int preferredChunkSize();

    /** Closes the connection; the handler's {@link FrameHandler#onClosed} runs once with this reason. */
    void close(String reason);

    boolean isOpen();

    /** Whether the calling thread is this connection's I/O thread (where blocking is not allowed). */
    boolean inIoThread();

    SocketAddress remoteAddress();

    SocketAddress localAddress();

    /** "tcp", "rdma", …: the transport carrying the frames. */
    String transportName();

    /**
     * The TLS session protecting this connection, whose handshake completed before the connection was handed to
     * core; null when the connection is plaintext. A connection made by an upgrade returns the session of the
     * connection it upgraded (the one that authenticated the peer and carried the upgrade's parameters).
     */
    default javax.net.ssl.SSLSession sslSession() {
        return null;
    }
}
