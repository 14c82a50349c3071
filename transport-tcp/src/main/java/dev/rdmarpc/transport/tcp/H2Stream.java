package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http2.Http2FrameStream;

/**
 * One gRPC call of an HTTP/2 connection as an {@link H2Bridge} translates it: the HTTP/2 stream, the rdmarpc stream id
 * core knows it by (client ids without gaps, as core requires), where the request's length-prefixed messages stand,
 * the client's bytes not yet handed to core, and what core's stream window has left. Used on the connection's I/O
 * thread only.
 */
final class H2Stream {
    /** gRPC's message prefix: a compressed flag byte and a 4-byte big-endian length. */
    static final int PREFIX = 5;

    final Http2FrameStream h2;
    final int coreId;
    /** Bytes of the current message's prefix read so far (0..5); 5 while its body is being read. */
    int prefixRead;
    final byte[] prefix = new byte[PREFIX];
    /** Body bytes of the current message still to come (valid while {@link #prefixRead} is 5). */
    long bodyLeft;
    /** Whether the current message's first MESSAGE frame (BEGIN) has gone to core. */
    boolean begun;
    /** Whether the current message has been admitted: its charge taken from core's connection window. */
    boolean admitted;
    /** The admitted message's charge while its BEGIN frame has not gone to core yet (it goes back if it never does). */
    int charge;
    /** Whether the stream waits in the bridge's queue for connection credit to admit its message. */
    boolean waiting;
    /** MESSAGE payload bytes core's window for this stream still takes. */
    int coreWindow;
    /** The client's bytes received and not yet handed to core (null while none are held). */
    ByteBuf held;
    /** Whether the client's END_STREAM has arrived (core hears it once the bytes before it are handed). */
    boolean endReceived;
    /** Whether the response headers have been sent (else TRAILERS become a trailers-only response). */
    boolean headersSent;
    /** Whether the call has ended for core: its TRAILERS went out, or core heard a CANCEL. */
    boolean ended;
    /** The connection-window charge of the response message core has begun and not finished sending, or 0. */
    int sendCharge;
    /** When the call's deadline ({@code grpc-timeout} from the request's arrival) passes, by {@code System.nanoTime()}. */
    private long deadlineNanos;
    /** Whether the request carried a {@code grpc-timeout}. */
    private boolean hasDeadline;
    /** Whether the client half-closed (END_STREAM). */
    boolean clientDone;
    /** What the stream's HTTP/2 window was grown by for the admitted message being handed, or 0. */
    int widened;
    /** The credit owed to core's window for the response bytes it sent on this stream. */
    final StreamSendCredit sendCredit = new StreamSendCredit(H2Bridge.SEND_WINDOW);

    H2Stream(Http2FrameStream h2, int coreId, int coreWindow) {
        this.h2 = h2;
        this.coreId = coreId;
        this.coreWindow = coreWindow;
    }

    /** The client's bytes this stream holds, not yet handed to core or returned: its HTTP/2 window is missing them. */
    int unreturned() {
        return (held == null ? 0 : held.readableBytes()) + (begun ? 0 : prefixRead);
    }

    /** Frees the bytes held. */
    void releaseHeld() {
        if (held != null) {
            held.release();
            held = null;
        }
    }

    /** Starts the call's deadline {@code timeoutNanos} from now; 0 (no {@code grpc-timeout}) for none. */
    void deadlineAfter(long timeoutNanos) {
        if (timeoutNanos > 0) {
            hasDeadline = true;
            deadlineNanos = System.nanoTime() + timeoutNanos;
        }
    }

    /** Whether the call's deadline has passed by {@code now}. */
    boolean deadlinePassed(long now) {
        return hasDeadline && now - deadlineNanos >= 0;
    }

    /** Whether a message is being read (its prefix has begun or its body has bytes to come). */
    boolean insideMessage() {
        return prefixRead > 0;
    }
}
