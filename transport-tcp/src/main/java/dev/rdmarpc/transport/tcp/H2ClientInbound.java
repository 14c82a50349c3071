package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;

/**
 * Turns a gRPC server's HTTP/2 answers into the rdmarpc frames core's client handles: response headers as HEADERS
 * (after gRPC's checks: HTTP status, content type), the length-prefixed messages of DATA as MESSAGE frames no larger
 * than core accepts, trailers (or a trailers-only response) as TRAILERS with the status they carry.
 */
final class H2ClientInbound {
    private final H2ClientBridge bridge;
    private final CoreFrames frames;

    H2ClientInbound(H2ClientBridge bridge, CoreFrames frames) {
        this.bridge = bridge;
        this.frames = frames;
    }

    void headers(Http2HeadersFrame f) {
        H2ClientStream s = bridge.byH2(f.stream().id());
        if (s == null || s.ended) {
            return;
        }
        Http2Headers h = f.headers();
        if (s.headersReceived || f.isEndStream()) {
            if (!f.isEndStream()) {
                bridge.fail(s, Status.INTERNAL.withDescription("the server sent a second HEADERS without END_STREAM"));
            } else if (s.messages.insideMessage()) {
                bridge.fail(s, Status.INTERNAL.withDescription("the server ended the stream inside a message"));
            } else {
                trailers(s, h);
            }
            return;
        }
        s.headersReceived = true;
        Status refusal = GrpcClientHeaders.refusal(h);
        if (refusal != null) {
            bridge.fail(s, refusal);
            return;
        }
        Metadata md;
        try {
            md = GrpcClientHeaders.metadata(h);
        } catch (IllegalArgumentException e) {
            bridge.fail(s, Status.INTERNAL.withDescription("malformed response metadata: " + e.getMessage()));
            return;
        }
        bridge.toCore(frames.responseHeaders(s.coreId, md));
    }

    private void trailers(H2ClientStream s, Http2Headers h) {
        Status status = GrpcClientHeaders.status(h);
        Metadata md;
        try {
            md = GrpcClientHeaders.metadata(h);
        } catch (IllegalArgumentException e) {
            status = Status.INTERNAL.withDescription("malformed trailers: " + e.getMessage());
            md = null;
        }
        bridge.endStream(s, status, md);
    }

    void data(Http2DataFrame f) {
        H2ClientStream s = bridge.byH2(f.stream().id());
        int received = f.initialFlowControlledBytes();
        if (s == null || s.ended) {
            bridge.returnCredit(f.stream(), received); // a call already over: its bytes are dropped and returned
            return;
        }
        if (!s.headersReceived) {
            bridge.returnCredit(f.stream(), received);
            bridge.fail(s, Status.INTERNAL.withDescription("the server sent DATA before the response headers"));
            return;
        }
        int padding = received - f.content().readableBytes();
        int uncounted;
        try {
            uncounted = s.messages.read(f.content(), s.coreId, bridge.coreMaxPayload(), frames, bridge::toCore, () -> s.ended);
        } catch (IllegalArgumentException e) {
            bridge.fail(s, Status.INTERNAL.withDescription(e.getMessage()));
            return;
        }
        if (!s.ended) {
            bridge.returnCredit(s.h2, padding + uncounted); // core credits back the rest as it takes the messages
        }
        if (f.isEndStream() && !s.ended) {
            bridge.fail(s, Status.INTERNAL.withDescription("the server ended the stream without trailers"));
        }
    }
}
