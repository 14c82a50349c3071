package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2FrameLogger;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.logging.LogLevel;

/**
 * Tells its listener each time the HTTP/2 codec writes a HEADERS or DATA frame to the socket (after flow control, as
 * grpc-java's server watches its frame writer for keepalive enforcement); it logs nothing. Netty's frame logger is the
 * codec's hook on the frames it writes.
 */
final class SentFramesMonitor extends Http2FrameLogger {
    private final Runnable headersOrDataSent;

    SentFramesMonitor(Runnable headersOrDataSent) {
        super(LogLevel.TRACE, SentFramesMonitor.class);
        this.headersOrDataSent = headersOrDataSent;
    }

    @Override
    public boolean isEnabled() {
        return false;
    }

    @Override
    public void logData(Direction direction, ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding,
            boolean endStream) {
        if (direction == Direction.OUTBOUND) {
            headersOrDataSent.run();
        }
    }

    @Override
    public void logHeaders(Direction direction, ChannelHandlerContext ctx, int streamId, Http2Headers headers,
            int padding, boolean endStream) {
        if (direction == Direction.OUTBOUND) {
            headersOrDataSent.run();
        }
    }

    @Override
    public void logHeaders(Direction direction, ChannelHandlerContext ctx, int streamId, Http2Headers headers,
            int streamDependency, short weight, boolean exclusive, int padding, boolean endStream) {
        if (direction == Direction.OUTBOUND) {
            headersOrDataSent.run();
        }
    }
}
