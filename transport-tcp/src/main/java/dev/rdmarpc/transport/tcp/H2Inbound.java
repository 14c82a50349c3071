package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.protocol.FrameFlags;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;

/**
 * Turns an HTTP/2 client's stream frames into the rdmarpc frames core handles: request HEADERS (after gRPC's checks:
 * POST, content type, path, {@code grpc-timeout}, metadata), gRPC's length-prefixed messages as MESSAGE frames no
 * larger than core accepts, END_STREAM, and RST_STREAM as CANCEL. A request that is not a gRPC call is answered here
 * as a gRPC server would (HTTP 405, 415, 404), and never reaches core.
 */
final class H2Inbound {
    private final H2Bridge bridge;
    private final CoreFrames frames;
    /** The next rdmarpc stream id: core wants 1, 3, 5, … without gaps, where HTTP/2 clients may skip. */
    private int nextCoreId = 1;

    H2Inbound(H2Bridge bridge, CoreFrames frames) {
        this.bridge = bridge;
        this.frames = frames;
    }

    void headers(Http2HeadersFrame f) {
        int id = f.stream().id();
        H2Stream s = bridge.byH2(id);
        if (s != null) { // trailers of a request: gRPC clients send none, but they may end the stream
            if (f.isEndStream() && !s.clientDone) {
                endOfRequest(s, false);
            } else {
                bridge.fail(s, Status.INTERNAL.withDescription("request trailers without END_STREAM"));
            }
            return;
        }
        if (!bridge.newStream(id)) {
            return; // a stream this side already answered on its own (refused): its later frames are dropped
        }
        Http2Headers h = f.headers();
        GrpcHeaders.Refusal refusal = GrpcHeaders.check(h);
        long timeout = GrpcHeaders.timeoutNanos(h.get(GrpcHeaders.GRPC_TIMEOUT));
        if (refusal == null && timeout < 0) {
            refusal = new GrpcHeaders.Refusal(400, Status.INTERNAL.withDescription("malformed grpc-timeout: " + h.get(GrpcHeaders.GRPC_TIMEOUT)));
        }
        Metadata md = null;
        if (refusal == null) {
            try {
                md = GrpcHeaders.metadata(h);
            } catch (IllegalArgumentException e) {
                refusal = new GrpcHeaders.Refusal(400, Status.INTERNAL.withDescription("malformed metadata: " + e.getMessage()));
            }
        }
        if (refusal != null) {
            bridge.refuse(f.stream(), refusal);
            return;
        }
        s = new H2Stream(f.stream(), nextCoreId);
        nextCoreId += 2;
        s.clientDone = f.isEndStream();
        bridge.opened(s);
        CharSequence authority = h.authority();
        bridge.toCore(frames.requestHeaders(s.coreId, f.isEndStream(), h.path().subSequence(1, h.path().length()).toString(),
                authority == null ? "" : authority.toString(), timeout, md));
    }

    void data(Http2DataFrame f) {
        H2Stream s = bridge.byH2(f.stream().id());
        int received = f.initialFlowControlledBytes();
        if (s == null || s.ended) {
            bridge.returnCredit(f.stream(), received); // a call already over: its bytes are dropped and returned
            return;
        }
        long handed = messages(s, f.content(), f.isEndStream());
        s.overhead += received - handed;
        if (s.overhead > 0 && !s.ended) {
            bridge.returnCredit(s, (int) s.overhead);
            s.overhead = 0;
        }
    }

    void reset(Http2ResetFrame f) {
        H2Stream s = bridge.byH2(f.stream().id());
        if (s != null) {
            bridge.cancel(s, Status.CANCELLED.withDescription("the client reset the stream (HTTP/2 error code " + f.errorCode() + ")"));
        }
    }

    /** Hands the messages in {@code in} to core as MESSAGE frames; returns the MESSAGE payload bytes handed. */
    private long messages(H2Stream s, ByteBuf in, boolean endStream) {
        long handed = 0;
        int maxChunk = Math.max(1, bridge.coreMaxPayload() - 4);
        boolean endSent = false;
        while (in.isReadable()) {
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
                s.bodyLeft = ((s.prefix[1] & 0xffL) << 24) | ((s.prefix[2] & 0xff) << 16) | ((s.prefix[3] & 0xff) << 8) | (s.prefix[4] & 0xff);
                s.begun = false;
                if (s.bodyLeft > 0) {
                    continue;
                }
            }
            int n = (int) Math.min(s.bodyLeft, Math.min(in.readableBytes(), s.begun ? maxChunk + 4 : maxChunk));
            int flags = s.begun ? 0 : FrameFlags.BEGIN | (s.prefix[0] == 1 ? FrameFlags.COMPRESSED : 0);
            boolean messageEnds = n == s.bodyLeft;
            if (messageEnds) {
                flags |= FrameFlags.END;
                if (endStream && n == in.readableBytes()) {
                    flags |= FrameFlags.END_STREAM;
                    endSent = true;
                }
            }
            long total = ((s.prefix[1] & 0xffL) << 24) | ((s.prefix[2] & 0xff) << 16) | ((s.prefix[3] & 0xff) << 8) | (s.prefix[4] & 0xff);
            bridge.toCore(frames.message(s.coreId, flags, total, in, n));
            handed += n + (s.begun ? 0 : 4);
            s.begun = true;
            s.bodyLeft -= n;
            if (messageEnds) {
                s.prefixRead = 0;
            }
        }
        if (endStream) {
            if (s.insideMessage()) {
                bridge.fail(s, Status.INTERNAL.withDescription("the client ended the stream inside a message"));
            } else {
                endOfRequest(s, endSent);
            }
        }
        return handed;
    }

    private void endOfRequest(H2Stream s, boolean alreadyTold) {
        s.clientDone = true;
        if (!alreadyTold) {
            bridge.toCore(frames.endStream(s.coreId));
        }
    }
}
