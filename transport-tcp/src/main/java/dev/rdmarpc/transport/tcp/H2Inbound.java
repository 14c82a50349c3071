package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameFlags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
            if (f.isEndStream() && !s.endReceived) {
                s.endReceived = true;
                resume(s); // END_STREAM once the bytes before it are handed
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
        SlabBuffer request = null;
        if (refusal == null) {
            try {
                request = frames.requestHeaders(nextCoreId, f.isEndStream(), h, timeout);
            } catch (IllegalArgumentException e) {
                refusal = new GrpcHeaders.Refusal(400, Status.INTERNAL.withDescription("malformed metadata: " + e.getMessage()));
            }
        }
        if (refusal != null) {
            bridge.refuse(f.stream(), refusal);
            return;
        }
        s = new H2Stream(f.stream(), nextCoreId, bridge.coreStreamWindow());
        s.deadlineAfter(timeout);
        nextCoreId += 2;
        s.clientDone = f.isEndStream();
        s.endReceived = f.isEndStream();
        bridge.opened(s);
        bridge.toCore(request);
    }

    void data(Http2DataFrame f) {
        H2Stream s = bridge.byH2(f.stream().id());
        int received = f.initialFlowControlledBytes();
        if (s == null || s.ended) {
            bridge.returnCredit(f.stream(), received); // a call already over: its bytes are dropped and returned
            return;
        }
        ByteBuf in = f.content();
        bridge.returnCredit(s, received - in.readableBytes()); // padding
        s.endReceived = f.isEndStream();
        if (s.held != null) { // bytes before these wait: these wait behind them
            s.held.writeBytes(in);
            in = s.held;
        }
        pump(s, in);
    }

    /** Core's window for stream {@code s} has room again, or its message was admitted: hands on what it holds. */
    void resume(H2Stream s) {
        if (!s.ended) {
            pump(s, s.held == null ? Unpooled.EMPTY_BUFFER : s.held);
        }
    }

    void reset(Http2ResetFrame f) {
        H2Stream s = bridge.byH2(f.stream().id());
        if (s != null) {
            bridge.cancel(s, Status.CANCELLED.withDescription("the client reset the stream (HTTP/2 error code " + f.errorCode() + ")"));
        }
    }

    /**
     * Hands core the messages in {@code in} as MESSAGE frames, as far as each message's admission and core's stream
     * window allow; what is left is kept in the stream (copied once, then appended to) until they do. The client's
     * HTTP/2 credit for bytes goes back as they are handed, so a stream whose message waits holds at most its HTTP/2
     * window.
     */
    private void pump(H2Stream s, ByteBuf in) {
        int maxChunk = Math.max(1, bridge.coreMaxPayload() - 4);
        while (!s.ended) {
            if (s.prefixRead < H2Stream.PREFIX) {
                if (!in.isReadable()) {
                    break;
                }
                int n = Math.min(H2Stream.PREFIX - s.prefixRead, in.readableBytes());
                in.readBytes(s.prefix, s.prefixRead, n);
                s.prefixRead += n;
                if (s.prefixRead < H2Stream.PREFIX) {
                    break;
                }
                if ((s.prefix[0] & ~1) != 0) {
                    bridge.fail(s, Status.INTERNAL.withDescription("a message's compressed flag is " + s.prefix[0] + ", not 0 or 1"));
                    return;
                }
                s.bodyLeft = messageLength(s);
            }
            if (!s.admitted && !bridge.admit(s, 4 + s.bodyLeft, 4 + (int) Math.min(s.bodyLeft, maxChunk))) {
                break; // waits for connection credit
            }
            int room = s.coreWindow - (s.begun ? 0 : 4);
            int n = (int) Math.min(Math.min(s.bodyLeft, in.readableBytes()), Math.min(s.begun ? maxChunk + 4 : maxChunk, room));
            if (room < 0 || (n == 0 && s.bodyLeft > 0)) {
                break; // core's stream window is full, or no body byte is here yet
            }
            boolean messageEnds = n == s.bodyLeft;
            int flags = s.begun ? 0 : FrameFlags.BEGIN | (s.prefix[0] == 1 ? FrameFlags.COMPRESSED : 0);
            if (messageEnds) {
                flags |= FrameFlags.END;
                if (s.endReceived && n == in.readableBytes()) {
                    flags |= FrameFlags.END_STREAM;
                    s.clientDone = true;
                }
            }
            if (!s.begun) {
                bridge.begun(s, 4 + n);
            }
            SlabBuffer frame = frames.message(s.coreId, flags, messageLength(s), in, n);
            int handed = n + (s.begun ? 0 : H2Stream.PREFIX);
            s.coreWindow -= n + (s.begun ? 0 : 4);
            s.begun = true;
            s.bodyLeft -= n;
            if (messageEnds) {
                s.prefixRead = 0;
                s.begun = false;
                s.admitted = false;
                bridge.narrowWindow(s);
            }
            bridge.returnCredit(s, handed); // handed: the client may send as many again
            // last, with the stream's state settled: core may end the call before this returns (a service answering at
            // once), and the end returns what the stream still holds, which must not count these bytes again
            bridge.toCore(frame);
        }
        keep(s, in);
        if (s.ended || !s.endReceived || s.clientDone) {
            return;
        }
        int held = s.held == null ? 0 : s.held.readableBytes();
        if (s.prefixRead == 0 && held == 0) {
            endOfRequest(s, false);
        } else if (s.prefixRead < H2Stream.PREFIX ? held == 0 : s.bodyLeft > held) {
            bridge.fail(s, Status.INTERNAL.withDescription("the client ended the stream inside a message"));
        }
    }

    /** Keeps what is left of {@code in} in the stream: a copy the first time, the stream's own buffer after. */
    private void keep(H2Stream s, ByteBuf in) {
        if (s.ended) {
            return;
        }
        if (in == s.held) {
            if (!in.isReadable()) {
                s.releaseHeld();
            } else {
                in.discardReadBytes();
            }
        } else if (in.isReadable()) {
            s.held = bridge.alloc().buffer(in.readableBytes());
            s.held.writeBytes(in);
        }
    }

    private static long messageLength(H2Stream s) {
        return ((s.prefix[1] & 0xffL) << 24) | ((s.prefix[2] & 0xff) << 16) | ((s.prefix[3] & 0xff) << 8) | (s.prefix[4] & 0xff);
    }

    private void endOfRequest(H2Stream s, boolean alreadyTold) {
        s.clientDone = true;
        if (!alreadyTold) {
            bridge.toCore(frames.endStream(s.coreId));
        }
    }
}
