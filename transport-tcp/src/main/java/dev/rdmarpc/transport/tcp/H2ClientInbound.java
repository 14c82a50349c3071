package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.protocol.FrameFlags;
import io.netty.buffer.ByteBuf;
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
            } else if (s.prefixRead > 0) {
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
        long handed = messages(s, f.content());
        if (received > handed && !s.ended) {
            bridge.returnCredit(s.h2, (int) (received - handed)); // prefix bytes and padding: core never counts them
        }
        if (f.isEndStream() && !s.ended) {
            bridge.fail(s, Status.INTERNAL.withDescription("the server ended the stream without trailers"));
        }
    }

    /** Hands the messages in {@code in} to core as MESSAGE frames; returns the MESSAGE payload bytes handed. */
    private long messages(H2ClientStream s, ByteBuf in) {
        long handed = 0;
        int maxChunk = Math.max(1, bridge.coreMaxPayload() - 4);
        while (in.isReadable() && !s.ended) {
            if (s.prefixRead < H2Stream.PREFIX) {
                int n = Math.min(H2Stream.PREFIX - s.prefixRead, in.readableBytes());
                in.readBytes(s.prefix, s.prefixRead, n);
                s.prefixRead += n;
                if (s.prefixRead < H2Stream.PREFIX) {
                    break;
                }
                if ((s.prefix[0] & ~1) != 0) {
                    bridge.fail(s, Status.INTERNAL.withDescription("a message's compressed flag is " + s.prefix[0] + ", not 0 or 1"));
                    return handed;
                }
                s.bodyLeft = s.messageLength();
                s.begun = false;
                if (s.bodyLeft > 0) {
                    continue;
                }
            }
            int n = (int) Math.min(s.bodyLeft, Math.min(in.readableBytes(), s.begun ? maxChunk + 4 : maxChunk));
            int flags = s.begun ? 0 : FrameFlags.BEGIN | (s.compressed() ? FrameFlags.COMPRESSED : 0);
            if (n == s.bodyLeft) {
                flags |= FrameFlags.END;
            }
            bridge.toCore(frames.message(s.coreId, flags, s.messageLength(), in, n));
            handed += n + (s.begun ? 0 : 4);
            s.begun = true;
            s.bodyLeft -= n;
            if (s.bodyLeft == 0) {
                s.prefixRead = 0;
            }
        }
        return handed;
    }
}
