package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.ServerTransport;
import dev.rdmarpc.core.spi.TransportConfig;
import dev.rdmarpc.core.spi.TransportProvider;

/** The "tcp" stream transport (Netty over epoll, io_uring or NIO), found by core with {@link java.util.ServiceLoader}. */
public final class TcpTransportProvider implements TransportProvider {
    /** Priority among stream transports; this is the default one. */
    public static final int PRIORITY = 10;

    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public ClientTransport newClientTransport(TransportConfig config) {
        return new TcpClientTransport(config);
    }

    @Override
    public ServerTransport newServerTransport(TransportConfig config) {
        return new TcpServerTransport(config);
    }
}
