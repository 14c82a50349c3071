package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.protocol.Hello;
import dev.rdmarpc.core.protocol.LimitsCapability;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2Settings;

/**
 * Netty's HTTP/2 codec for one server connection, with core's limits (from the HELLO core answered with) as its
 * SETTINGS and Netty's own protections against hostile clients switched on: rapid reset, CONTINUATION floods, empty
 * DATA floods, queued control-frame answers to a client that does not read.
 */
final class H2Codecs {
    /** Header bytes allowed beyond core's metadata limit for the pseudo-headers, content type, timeout, user agent. */
    static final int HEADER_LIST_ALLOWANCE = 4096;
    /**
     * A server stream's HTTP/2 receive window: HTTP/2's default. It bounds what a stream whose message waits for
     * admission makes the bridge hold; an admitted message's bytes get their credit back as they are handed to core,
     * and its stream's window grows meanwhile by what core's stream window takes of it ({@link H2AdmittedWindows}).
     */
    static final int STREAM_WINDOW = Http2CodecUtil.DEFAULT_WINDOW_SIZE;
    /** RST_STREAM frames a client may send per window before the connection ends (Netty's default, stated). */
    static final int MAX_RSTS_PER_WINDOW = 200;
    static final int RST_WINDOW_SECONDS = 30;
    /** Answers (SETTINGS and PING ACKs, RST_STREAMs) queued for a client that does not read before it is closed. */
    static final int MAX_QUEUED_CONTROL_FRAMES = 10_000;
    /** CONTINUATION frames smaller than 8 KiB in a row before the connection ends. */
    static final int MAX_SMALL_CONTINUATIONS = 16;
    /** DATA frames without bytes in a row before the connection ends. */
    static final int MAX_EMPTY_DATA_FRAMES = 2;

    private H2Codecs() {
    }

    /**
     * The codec for a connection whose core answered with {@code coreHello}; {@code headersOrDataSent} runs each time
     * it writes a HEADERS or DATA frame to the socket.
     */
    static Http2FrameCodec server(Hello coreHello, Runnable headersOrDataSent) {
        LimitsCapability limits = LimitsCapability.of(coreHello);
        Http2Settings settings = new Http2Settings()
                .initialWindowSize(STREAM_WINDOW)
                .maxConcurrentStreams(limits.maxConcurrentStreams())
                .maxHeaderListSize((long) Math.min((long) limits.maxMetadataBytes() + HEADER_LIST_ALLOWANCE,
                        Http2CodecUtil.MAX_HEADER_LIST_SIZE));
        return UniformCodecBuilder.server()
                .initialSettings(settings)
                .frameLogger(new SentFramesMonitor(headersOrDataSent))
                .autoAckPingFrame(true)
                .autoAckSettingsFrame(true)
                .validateHeaders(true)
                .gracefulShutdownTimeoutMillis(0)
                .decoderEnforceMaxRstFramesPerWindow(MAX_RSTS_PER_WINDOW, RST_WINDOW_SECONDS)
                .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATIONS)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(MAX_EMPTY_DATA_FRAMES)
                .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
                .build();
    }

    /**
     * The connection-wide receive window: HTTP/2's largest, so that it never holds a stream back. Core returns a
     * stream's credit per stream (when half its window is owed, or the sender has less than half left); a connection
     * window smaller than the streams' windows together would let many streams' partial messages fill it while none
     * reaches that point, and every stream would wait. What the connection holds is bounded by its stream windows.
     */
    static int serverConnectionWindow() {
        return Http2CodecUtil.MAX_INITIAL_WINDOW_SIZE;
    }

    /** A client's connection-wide receive window: room for a few streams' windows at once. */
    static int connectionWindow(Hello coreHello) {
        return (int) Math.min(4L * coreHello.initialWindow(), Http2CodecUtil.MAX_INITIAL_WINDOW_SIZE);
    }

    /**
     * A client connection's receive window: the largest HTTP/2 allows, so that it never binds. Core's client keeps a
     * window per stream only, returns a stream's credit in batches of half its window, and credits a message still
     * arriving only while the application asks for it; a connection window smaller than the open streams' windows
     * together would fill with parts of messages no stream can finish, and every call would wait. What the server may
     * send is bounded by the stream windows (core reopens each as its application takes messages), as from an
     * rdmarpc server.
     */
    static final int CLIENT_CONNECTION_WINDOW = Http2CodecUtil.MAX_INITIAL_WINDOW_SIZE;

    /**
     * The codec for a client connection: HTTP/2's default stream window (no larger than any window core may have, so
     * that the server never sends more than core takes before core's HELLO sets it, see {@link #clientSettings}), no
     * server push, streams past the server's concurrent-stream limit held back, and the protections against a hostile
     * server that apply to a client.
     */
    static Http2FrameCodec client() {
        Http2Settings settings = new Http2Settings()
                .initialWindowSize(Http2CodecUtil.DEFAULT_WINDOW_SIZE)
                .pushEnabled(false);
        return UniformCodecBuilder.client()
                .initialSettings(settings)
                .autoAckPingFrame(true)
                .autoAckSettingsFrame(true)
                .validateHeaders(true)
                .gracefulShutdownTimeoutMillis(0)
                .encoderEnforceMaxConcurrentStreams(true)
                .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATIONS)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(MAX_EMPTY_DATA_FRAMES)
                .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
                .build();
    }

    /** The SETTINGS a client sends once core's HELLO is known: core's stream window and metadata limit. */
    static Http2Settings clientSettings(Hello coreHello) {
        LimitsCapability limits = LimitsCapability.of(coreHello);
        return new Http2Settings()
                .initialWindowSize(Math.min(coreHello.initialWindow(), Http2CodecUtil.MAX_INITIAL_WINDOW_SIZE))
                .maxHeaderListSize((long) Math.min((long) limits.maxMetadataBytes() + HEADER_LIST_ALLOWANCE,
                        Http2CodecUtil.MAX_HEADER_LIST_SIZE));
    }
}
