package dev.rdmarpc.transport.tcp;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
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
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;

import java.lang.System.Logger.Level;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The I/O mechanism under Netty (epoll, io_uring or NIO): its event loops and channel classes, and
 * the choice for {@link dev.rdmarpc.core.spi.TransportConfig#nativeIo()}. "auto" takes the first
 * available in declaration order: epoll had the lowest loopback round trip of the three when
 * measured with {@code LoopbackPingPong} (64-byte frames, median ~18 us against ~18.5 us for NIO
 * and ~20 us for io_uring; sent from an application thread 23, 26 and 27 us), and io_uring is
 * often missing or restricted in containers.
 */
enum IoFlavor {
    EPOLL("epoll"),
    IO_URING("io_uring"),
    NIO("nio");

    private static final Set<IoFlavor> LOGGED = EnumSet.noneOf(IoFlavor.class);

    private final String configName;

    IoFlavor(String configName) {
        this.configName = configName;
    }

    /** The name used in {@code TransportConfig.nativeIo()}. */
    String configName() {
        return configName;
    }

    boolean isAvailable() {
        return switch (this) {
            case EPOLL -> Epoll.isAvailable();
            case IO_URING -> IoUring.isAvailable();
            case NIO -> true;
        };
    }

    private Throwable unavailabilityCause() {
        return switch (this) {
            case EPOLL -> Epoll.unavailabilityCause();
            case IO_URING -> IoUring.unavailabilityCause();
            case NIO -> null;
        };
    }

    private IoHandlerFactory handlerFactory() {
        return switch (this) {
            case EPOLL -> EpollIoHandler.newFactory();
            case IO_URING -> IoUringIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
    }

    /** An event loop group of {@code threads} daemon threads named {@code rdmarpc-tcp-io-N}. */
    EventLoopGroup newGroup(int threads) {
        return new MultiThreadIoEventLoopGroup(threads, new IoThreadFactory(), handlerFactory());
    }

    Class<? extends SocketChannel> socketChannel() {
        return switch (this) {
            case EPOLL -> EpollSocketChannel.class;
            case IO_URING -> IoUringSocketChannel.class;
            case NIO -> NioSocketChannel.class;
        };
    }

    Class<? extends ServerSocketChannel> serverSocketChannel() {
        return switch (this) {
            case EPOLL -> EpollServerSocketChannel.class;
            case IO_URING -> IoUringServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    /**
     * The flavor for a {@code nativeIo} setting: "auto" (the best available), or "epoll",
     * "io_uring", "nio". A named native flavor this host lacks falls back to the best available one,
     * with a warning.
     *
     * @throws IllegalArgumentException for any other value
     */
    static IoFlavor select(String nativeIo) {
        String wanted = nativeIo == null ? "auto" : nativeIo.trim().toLowerCase(Locale.ROOT);
        IoFlavor chosen;
        if (wanted.equals("auto") || wanted.isEmpty()) {
            chosen = best();
        } else {
            IoFlavor named = byName(wanted);
            if (named.isAvailable()) {
                chosen = named;
            } else {
                chosen = best();
                TcpFrameConnection.LOG.log(Level.WARNING, "{0} was asked for but is not available here ({1}); using {2}",
                        named.configName, String.valueOf(named.unavailabilityCause()), chosen.configName);
            }
        }
        logOnce(chosen);
        return chosen;
    }

    private static IoFlavor byName(String name) {
        for (IoFlavor f : values()) {
            if (f.configName.equals(name) || (f == IO_URING && name.equals("iouring"))) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown native I/O setting '" + name + "': use auto, epoll, io_uring or nio");
    }

    private static IoFlavor best() {
        for (IoFlavor f : values()) {
            if (f.isAvailable()) {
                return f;
            }
        }
        return NIO;
    }

    private static void logOnce(IoFlavor f) {
        synchronized (LOGGED) {
            if (!LOGGED.add(f)) {
                return;
            }
        }
        TcpFrameConnection.LOG.log(Level.DEBUG, "tcp transport uses {0}", f.configName);
    }
}
