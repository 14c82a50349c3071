package dev.rdmarpc.transport.tcp;

import io.netty.handler.codec.http2.Http2FrameStream;

/**
 * One call of a client connection that speaks gRPC over HTTP/2, as an {@link H2ClientBridge} translates it: core's
 * stream id, the HTTP/2 stream, where the response's length-prefixed messages stand, and what of the server's
 * flow-control credit is owed back. Used on the connection's I/O thread only.
 */
final class H2ClientStream {
    final int coreId;
    final Http2FrameStream h2;
    /** Bytes of the current message's prefix read so far (0..5); 5 while its body is being read. */
    int prefixRead;
    final byte[] prefix = new byte[H2Stream.PREFIX];
    /** Body bytes of the current message still to come (valid while {@link #prefixRead} is 5). */
    long bodyLeft;
    /** Whether the current message's first MESSAGE frame (BEGIN) has gone to core. */
    boolean begun;
    /** Whether the response headers arrived (later headers are the trailers). */
    boolean headersReceived;
    /** Whether this side ended its request (END_STREAM sent). */
    boolean clientDone;
    /** Whether the call has ended for core: it heard TRAILERS or CANCEL, or sent CANCEL. */
    boolean ended;

    H2ClientStream(int coreId, Http2FrameStream h2) {
        this.coreId = coreId;
        this.h2 = h2;
    }

    /** The length the current message's prefix announces. */
    long messageLength() {
        return ((prefix[1] & 0xffL) << 24) | ((prefix[2] & 0xff) << 16) | ((prefix[3] & 0xff) << 8) | (prefix[4] & 0xff);
    }

    /** Whether the compressed flag of the current message is set. */
    boolean compressed() {
        return prefix[0] == 1;
    }
}
