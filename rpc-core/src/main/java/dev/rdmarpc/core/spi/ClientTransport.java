package dev.rdmarpc.core.spi;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/** Opens connections to servers. */
public interface ClientTransport extends AutoCloseable {

    /**
     * Connects; the future completes with the connection once it is open (its handler is bound
     * and reading), or exceptionally with the I/O error (e.g. connection refused, timeout).
     */
    CompletableFuture<FrameConnection> connect(InetSocketAddress address, FrameHandlerFactory handlers, int connectTimeoutMillis);

    /** Closes every connection and frees the transport's threads. */
    @Override
    void close();
}
