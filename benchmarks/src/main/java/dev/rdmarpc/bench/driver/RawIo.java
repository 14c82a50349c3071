package dev.rdmarpc.bench.driver;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Netty I/O for netty-raw: epoll where available (as transport-tcp and grpc-netty pick), NIO otherwise. */
final class RawIo {
    private static final boolean EPOLL = !"nio".equals(System.getProperty("rdmarpc.bench.raw.io")) && Epoll.isAvailable();

    private RawIo() {
    }

    static EventLoopGroup group(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true),
                EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    }

    static Class<? extends SocketChannel> socketChannel() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    static Class<? extends ServerSocketChannel> serverSocketChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** "epoll" or "nio". */
    static String flavor() {
        return EPOLL ? "epoll" : "nio";
    }
}
