package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import dev.rdmarpc.core.spi.TransportConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/** Opens TCP connections to rdmarpc servers over Netty, on its own small group of I/O threads. */
final class TcpClientTransport implements ClientTransport {
    /** I/O threads when the config says 0. */
    static final int DEFAULT_IO_THREADS = 1;

    private final IoFlavor flavor;
    private final EventLoopGroup group;
    private final Set<Channel> channels = ConcurrentHashMap.newKeySet();
    private final OpenConnections connections = new OpenConnections();
    private volatile boolean closed;

    /** A transport with the config's I/O threads (0: one) and native I/O choice; threads start on first connect. */
    public TcpClientTransport(TransportConfig config) {
        this.flavor = IoFlavor.select(config.nativeIo());
        this.group = flavor.newGroup(config.ioThreads() > 0 ? config.ioThreads() : DEFAULT_IO_THREADS);
    }

    @Override
    public CompletableFuture<FrameConnection> connect(InetSocketAddress address, FrameHandlerFactory handlers, int connectTimeoutMillis) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(handlers, "handlers");
        CompletableFuture<FrameConnection> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new IllegalStateException("the tcp client transport is closed"));
            return result;
        }
        Bootstrap b = SocketOptions.client(new Bootstrap(), connectTimeoutMillis)
                .group(group)
                .channel(flavor.socketChannel())
                .handler(new TcpChannelHandler(handlers, result, connections));
        ChannelFuture f;
        try {
            f = b.connect(address);
        } catch (RuntimeException e) {
            // e.g. the group was shut down by a concurrent close
            result.completeExceptionally(e);
            return result;
        }
        Channel ch = f.channel();
        channels.add(ch);
        ch.closeFuture().addListener(x -> channels.remove(ch));
        f.addListener(x -> {
            if (!x.isSuccess()) {
                // The original exception: ConnectException "Connection refused: /host:port", ConnectTimeoutException …
                result.completeExceptionally(x.cause());
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                ch.close();
            }
        });
        if (closed) {
            ch.close();
        }
        return result;
    }

    /** Which of epoll, io_uring or NIO this transport runs on. */
    String ioName() {
        return flavor.configName();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        connections.closeAll("client transport closed");
        for (Channel ch : channels) {
            ch.close();
        }
        EventLoops.shutdown(group);
    }
}
