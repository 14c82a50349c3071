package dev.rdmarpc.core.spi;

import java.io.IOException;
import java.net.InetSocketAddress;

/** Accepts connections on one listening address. */
public interface ServerTransport extends AutoCloseable {

    /**
     * Starts listening; every accepted connection gets a handler from {@code handlers}.
     *
     * @return the bound address (with the real port when 0 was asked)
     * @throws IOException naming the address and port when binding fails (e.g. port in use)
     */
    InetSocketAddress bind(InetSocketAddress address, FrameHandlerFactory handlers) throws IOException;

    /** Stops accepting new connections; open ones carry on. */
    void stopAccepting();

    /** Stops accepting, closes every open connection and frees the transport's threads. */
    @Override
    void close();
}
