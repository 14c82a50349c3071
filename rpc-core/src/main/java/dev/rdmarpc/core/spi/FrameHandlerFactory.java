package dev.rdmarpc.core.spi;

/** Binds a handler to a new connection before the transport reads any frame from it. */
@FunctionalInterface
public interface FrameHandlerFactory {
    FrameHandler newHandler(FrameConnection connection);
}
