package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientLiveness;
import dev.rdmarpc.core.internal.connection.ConnectionSettings;
import dev.rdmarpc.core.internal.exec.RpcExecutors;
import dev.rdmarpc.core.internal.server.ServerImpl;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.ClientTransport;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandlerFactory;
import dev.rdmarpc.core.spi.ServerTransport;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Client and server transports whose connections are {@link FakeConnection}s the test drives. */
final class FakeTransports {
    private FakeTransports() {
    }

    /** The tests' usual limits: a 1 MiB stream window, 4 MiB messages, TCP, the other limits at their defaults. */
    static ConnectionSettings settings(SlabPool pool) {
        return new ConnectionSettings(pool, 1 << 20, ConnectionSettings.DEFAULT_MAX_FRAME_PAYLOAD, 4 << 20,
                TransportMode.TCP, List.of(), ConnectionSettings.DEFAULT_MAX_CONCURRENT_STREAMS,
                ConnectionSettings.DEFAULT_MAX_METADATA_BYTES, ConnectionSettings.DEFAULT_MAX_ATTACHMENT_BYTES);
    }

    /** Connects at once; each connection is queued for the test to take. */
    static final class Client implements ClientTransport {
        final BlockingQueue<FakeConnection> connections = new LinkedBlockingQueue<>();
        private final SlabPool pool;

        Client(SlabPool pool) {
            this.pool = pool;
        }

        /**
         * How long a channel waits for the server's HELLO: the test plays the server and answers when it gets there,
         * which on a loaded machine can be seconds later; a shorter wait would close the connection the test is about
         * to greet and dial another one it never takes.
         */
        static final int HELLO_WAIT_MILLIS = 60_000;

        /** A channel to a made-up address over this transport, the tests' usual limits, callbacks on {@code executor}. */
        ChannelImpl channel(java.util.concurrent.Executor executor) {
            return new ChannelImpl("127.0.0.1", 9, this, settings(pool), executor, null, HELLO_WAIT_MILLIS, null,
                    new ClientLiveness(0, 0, 0, 0));
        }

        @Override
        public CompletableFuture<FrameConnection> connect(InetSocketAddress address, FrameHandlerFactory handlers, int timeoutMillis) {
            FakeConnection c = new FakeConnection(pool);
            c.bind(handlers.newHandler(c));
            connections.add(c);
            return CompletableFuture.completedFuture(c);
        }

        FakeConnection take() throws InterruptedException {
            FakeConnection c = connections.poll(60, TimeUnit.SECONDS);
            if (c == null) {
                throw new AssertionError("no connection was made");
            }
            return c;
        }

        /** Takes the next connection, checks that its first frame is the client's HELLO, and answers with the server's. */
        FakeConnection takeGreeted() throws InterruptedException {
            FakeConnection c = take();
            greet(c);
            return c;
        }

        /** Checks that {@code c}'s first frame is the client's HELLO, and answers with the server's. */
        void greet(FakeConnection c) throws InterruptedException {
            assertEquals(FrameType.HELLO, c.next().type());
            c.deliver(StreamFrames.hello(pool));
        }

        @Override
        public void close() {
        }
    }

    /** Accepts the connections the test makes with {@link #accept}. */
    static final class Server implements ServerTransport {
        private final SlabPool pool;
        private volatile FrameHandlerFactory handlers;

        Server(SlabPool pool) {
            this.pool = pool;
        }

        /** A started server of {@code service} on this transport, the tests' usual limits, handlers on the I/O thread. */
        ServerImpl serve(dev.rdmarpc.core.ServiceDefinition service) throws java.io.IOException {
            ServerImpl server = new ServerImpl(new InetSocketAddress("127.0.0.1", 0), List.of(service), this,
                    settings(pool), RpcExecutors.direct(), null, 20_000);
            server.start();
            return server;
        }

        @Override
        public InetSocketAddress bind(InetSocketAddress address, FrameHandlerFactory h) {
            this.handlers = h;
            return new InetSocketAddress("127.0.0.1", 9);
        }

        FakeConnection accept() {
            FakeConnection c = new FakeConnection(pool);
            c.bind(handlers.newHandler(c));
            return c;
        }

        /** Accepts a connection, says the client's HELLO and checks that the server answers with its own. */
        FakeConnection acceptGreeted() throws InterruptedException {
            FakeConnection c = accept();
            c.deliver(StreamFrames.hello(pool));
            assertEquals(FrameType.HELLO, c.next().type());
            return c;
        }

        @Override
        public void stopAccepting() {
        }

        @Override
        public void close() {
        }
    }
}
