package dev.rdmarpc.transport.tcp;

import io.netty.handler.codec.http2.Http2FrameStream;

/**
 * One gRPC call of an HTTP/2 connection as an {@link H2Bridge} translates it: the HTTP/2 stream, the rdmarpc stream id
 * core knows it by (client ids without gaps, as core requires), where the request's length-prefixed messages stand,
 * and how much of the client's flow-control credit is owed back. Used on the connection's I/O thread only.
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
    /** HTTP/2 bytes received but neither handed to core as MESSAGE payload nor returned yet (prefix and padding). */
    long overhead;
    /** Whether the response headers have been sent (else TRAILERS become a trailers-only response). */
    boolean headersSent;
    /** Whether the call has ended for core: its TRAILERS went out, or core heard a CANCEL. */
    boolean ended;
    /** The connection-window charge of the response message core has begun and not finished sending, or 0. */
    int sendCharge;
    /** Whether the client half-closed (END_STREAM). */
    boolean clientDone;

    H2Stream(Http2FrameStream h2, int coreId) {
        this.h2 = h2;
        this.coreId = coreId;
    }

    /** Whether a message is being read (its prefix has begun or its body has bytes to come). */
    boolean insideMessage() {
        return prefixRead > 0;
    }
}
