package dev.rdmarpc.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;

/**
 * The socket options every connection of this transport gets: no Nagle delay, keep-alive, and
 * the outbound water marks behind {@link dev.rdmarpc.core.spi.FrameConnection#isWritable()}.
 */
final class SocketOptions {
    /**
     * Unsent outbound bytes above which a connection reports not writable: 256 KiB, on top of what the kernel's
     * socket buffer already holds (on loopback and fast links several hundred KiB to a few MiB), which is plenty to
     * keep the socket busy while senders wait for {@code onWritable}; more would only be memory a slow reader pins.
     */
    static final int HIGH_WATER_MARK = 256 * 1024;
    /** Unsent outbound bytes below which it is writable again (a quarter of the high mark, so it does not flap). */
    static final int LOW_WATER_MARK = 64 * 1024;
    /** Pending connections the listening socket keeps. */
    static final int BACKLOG = 1024;

    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(LOW_WATER_MARK, HIGH_WATER_MARK);

    private SocketOptions() {
    }

    /** Options of a client connection; {@code connectTimeoutMillis} of 0 or less keeps Netty's default. */
    static Bootstrap client(Bootstrap b, int connectTimeoutMillis) {
        b.option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
        if (connectTimeoutMillis > 0) {
            b.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis);
        }
        return b;
    }

    /** Options of the listening socket and of every accepted connection. */
    static ServerBootstrap server(ServerBootstrap b) {
        return b.option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, BACKLOG)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
    }
}
