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
    /** Outbound bytes queued in Netty above which a connection reports not writable. */
    static final int HIGH_WATER_MARK = 1024 * 1024;
    /** Outbound bytes queued in Netty below which it is writable again. */
    static final int LOW_WATER_MARK = 256 * 1024;
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
