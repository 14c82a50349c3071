package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandlerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** A server whose connections echo every frame, and a client transport to reach it, on loopback. */
final class EchoLoop implements AutoCloseable {
    final TcpServerTransport server;
    final TcpClientTransport client;
    final InetSocketAddress address;
    final RecordingHandler.Factory serverHandlers;
    final RecordingHandler.Factory clientHandlers = new RecordingHandler.Factory(false);

    EchoLoop(String io) throws Exception {
        this(io, new RecordingHandler.Factory(true), 0);
    }

    /** With {@code serverHandlers}, and a larger payload limit on both ends when {@code maxPayload > 0}. */
    EchoLoop(String io, RecordingHandler.Factory serverHandlers, int maxPayload) throws Exception {
        this.serverHandlers = serverHandlers;
        server = new TcpServerTransport(TestTransports.config(io));
        client = new TcpClientTransport(TestTransports.config(io));
        FrameHandlerFactory handlers = maxPayload <= 0 ? serverHandlers : c -> {
            c.setMaxInboundPayload(maxPayload);
            return serverHandlers.newHandler(c);
        };
        try {
            address = server.bind(TestTransports.ANY_LOOPBACK_PORT, handlers);
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** A new client connection; its handler records what comes back. */
    RecordingHandler connect() throws Exception {
        return connect(0);
    }

    RecordingHandler connect(int maxPayload) throws Exception {
        FrameConnection c = client.connect(address, clientHandlers, 30_000).get(60, TimeUnit.SECONDS);
        RecordingHandler h = clientHandlers.next();
        if (h.connection != c) {
            throw new AssertionError("the future's connection is not the one given to the handler");
        }
        if (maxPayload > 0) {
            c.setMaxInboundPayload(maxPayload);
        }
        return h;
    }

    @Override
    public void close() {
        client.close();
        server.close();
    }
}
