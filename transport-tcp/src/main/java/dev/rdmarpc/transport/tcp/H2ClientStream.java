package dev.rdmarpc.transport.tcp;

import io.netty.handler.codec.http2.Http2FrameStream;

/**
 * One call of a client connection that speaks gRPC over HTTP/2, as an {@link H2ClientBridge} translates it: core's
 * stream id, the HTTP/2 stream, the reader of the response's length-prefixed messages, and where the call stands. Used
 * on the connection's I/O thread only.
 */
final class H2ClientStream {
    final int coreId;
    final Http2FrameStream h2;
    final GrpcFraming messages = new GrpcFraming();
    /** Whether the response headers arrived (later headers are the trailers). */
    boolean headersReceived;
    /** Whether this side ended its request (END_STREAM sent). */
    boolean clientDone;
    /** Whether the call has ended for core: it heard TRAILERS or CANCEL, or sent CANCEL. */
    boolean ended;
    /** The credit owed to core's window for the request bytes it sent on this stream. */
    final StreamSendCredit sendCredit = new StreamSendCredit(H2Bridge.SEND_WINDOW);

    H2ClientStream(int coreId, Http2FrameStream h2) {
        this.coreId = coreId;
        this.h2 = h2;
    }
}
