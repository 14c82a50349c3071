package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.spi.FrameConnection;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import dev.rdmarpc.core.spi.FrameHandler;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.rdmarpc.core.TlsConfig;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.spi.TransportConfig;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.rdmarpc.core.protocol.FrameType;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A reader that does not keep up, or sends queued past the high-water mark, make the connection unwritable; onWritable follows when it drains. */
@ExtendWith(LeakCheck.class)
class WritabilityTest {

    static List<String> flavors() {
        return TestTransports.flavors();
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void slowReaderTurnsWritabilityOffAndDrainingTurnsItBackOn(String io) throws Exception {
        RecordingHandler.Factory serverHandlers = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, serverHandlers, 0);
             RawClient slowReader = new RawClient(loop.address)) {
            slowReader.socket.setReceiveBufferSize(64 * 1024);
            RecordingHandler server = serverHandlers.next();
            FrameConnection c = server.connection;
            assertTrue(c.isWritable());
            Filled filled = fillUntilUnwritable(server);
            long total = filled.sent();
            int before = filled.writableCallsBefore();
            assertEquals(total, readAll(slowReader, total), "the reader did not get everything that was sent");
            Await.until(() -> server.writableCalls.get() > before, "onWritable once the reader drained the connection");
            assertTrue(c.isWritable());
        }
    }

    /** What {@link #fillUntilUnwritable} sent, and the handler's onWritable count while it was last unwritable. */
    private record Filled(long sent, int writableCallsBefore) {
    }

    /**
     * Sends flushed frames from the test thread until the connection stays unwritable (the peer reads nothing: socket
     * buffers fill, then Netty's outbound buffer passes the high-water mark).
     */
    private static Filled fillUntilUnwritable(RecordingHandler server) {
        FrameConnection c = server.connection;
        byte[] chunk = new byte[64 * 1024];
        long sent = 0;
        // the bound only ends a hung test: the high-water mark is normally passed within a second
        long deadline = System.nanoTime() + Await.DEFAULT_BOUND.toNanos();
        // Kernel buffers grow as they fill, so writability may come back on its own: fill until it stays off.
        int writableCallsBefore;
        do {
            while (c.isWritable() && System.nanoTime() - deadline < 0) {
                c.send(TestFrames.message(1, chunk));
                sent += chunk.length + 16; // sends still queued count too: the loop stops at the high-water mark
            }
            writableCallsBefore = server.writableCalls.get(); // before the check: an onWritable after it counts
        } while (c.isWritable() && System.nanoTime() - deadline < 0);
        assertFalse(c.isWritable(), "still writable after " + sent + " bytes");
        return new Filled(sent, writableCallsBefore);
    }

    /** Reads from {@code client} until {@code total} bytes came or the stream ended; returns what was read. */
    private static long readAll(RawClient client, long total) throws Exception {
        AtomicLong received = new AtomicLong();
        Thread reader = new Thread(() -> {
            try {
                InputStream in = client.socket.getInputStream();
                byte[] buf = new byte[256 * 1024];
                int n;
                while (received.get() < total && (n = in.read(buf)) > 0) {
                    received.addAndGet(n);
                }
            } catch (Exception e) {
                // the test's asserts say what went wrong
            }
        }, "slow-reader");
        reader.start();
        reader.join(Await.DEFAULT_BOUND.toMillis());
        return received.get();
    }

    /**
     * Sends from a thread other than the I/O thread, without flush, until the write queue holds more than the
     * high-water mark (the last send turns the connection unwritable, and the transport drains the queue on its own).
     */
    private static long sendUnflushedPastTheHighWaterMark(FrameConnection c) {
        byte[] chunk = new byte[32 * 1024];
        long queued = 0;
        while (queued <= SocketOptions.HIGH_WATER_MARK) {
            assertTrue(c.isWritable(), "not writable with " + queued + " bytes queued");
            c.send(TestFrames.message(1, chunk), null, false);
            queued += chunk.length + 16;
        }
        return queued;
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void sendsQueuedPastTheHighWaterMarkAreDrainedWithoutAFlushAndOnWritableFollows(String io) throws Exception {
        RecordingHandler.Factory serverHandlers = new RecordingHandler.Factory(false);
        try (EchoLoop loop = new EchoLoop(io, serverHandlers, 0);
             RawClient reader = new RawClient(loop.address)) {
            RecordingHandler server = serverHandlers.next();
            TcpFrameConnection c = (TcpFrameConnection) server.connection;
            int before = server.writableCalls.get();
            long queued = sendUnflushedPastTheHighWaterMark(c);

            // no flush: the sends past the mark reach the peer anyway
            assertEquals(queued, readAll(reader, queued));
            Await.until(() -> server.writableCalls.get() > before, "onWritable once the queue drained");
            assertTrue(c.isWritable());
            // the count drops as each write's future completes, which can come after the peer read its bytes
            Await.until(() -> c.unsentBytes() == 0, "every queued byte counted as sent");
        }
    }

    @ParameterizedTest
    @MethodSource("flavors")
    void writabilityWorksUnderTls(String io) throws Exception {
        TlsConfig serverTls = TlsConfig.forServer(TlsTestFiles.path("server.pem"), TlsTestFiles.path("server.key")).build();
        TlsConfig clientTls = TlsConfig.forClient().trustRoots(TlsTestFiles.path("ca.pem")).build();
        TcpServerTransport server = new TcpServerTransport(new TransportConfig(SlabPool.shared(), 0, io, serverTls, 30_000));
        TcpClientTransport client = new TcpClientTransport(new TransportConfig(SlabPool.shared(), 0, io, clientTls, 30_000));
        try {
            RecordingHandler.Factory serverHandlers = new RecordingHandler.Factory(false);
            RecordingHandler.Factory clientHandlers = new RecordingHandler.Factory(false);
            InetSocketAddress address = server.bind(TestTransports.ANY_LOOPBACK_PORT, serverHandlers);
            client.connect(new InetSocketAddress("localhost", address.getPort()), clientHandlers, 30_000).get(60, TimeUnit.SECONDS);
            RecordingHandler s = serverHandlers.next();
            RecordingHandler cl = clientHandlers.next();
            TcpFrameConnection c = (TcpFrameConnection) s.connection;
            assertTrue(c.sslSession() != null);

            int before = s.writableCalls.get();
            c.send(TestFrames.hello(), null, false);
            long queued = sendUnflushedPastTheHighWaterMark(c);
            c.flush();
            int frames = (int) ((queued) / (32 * 1024 + 16));
            assertEquals(FrameType.HELLO, cl.nextFrame().type());
            for (int i = 0; i < frames; i++) {
                assertEquals(32 * 1024, cl.nextFrame().payload().length);
            }
            Await.until(() -> s.writableCalls.get() > before, "onWritable once the TLS connection drained");
            assertTrue(c.isWritable());
            // writable again below the low-water mark, and the count drops as each write's future completes (under
            // TLS after the encrypted record is written), which can come after the peer read the frame
            Await.until(() -> c.unsentBytes() == 0, "every queued byte counted as sent");
        } finally {
            client.close();
            server.close();
        }
    }

    /**
     * A flush that empties the outbound buffer turns the channel writable while the handler is still inside its
     * flush (whose caller may hold its own locks): the handler hears onWritable only after the flush returned.
     * An embedded channel hands every flushed byte over at once, so the flip happens inside the flush every time.
     */
    @Test
    void onWritableNeverRunsInsideTheHandlersOwnSendOrFlush() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(SocketOptions.LOW_WATER_MARK, SocketOptions.HIGH_WATER_MARK));
        TcpFrameConnection c = new TcpFrameConnection(ch, true);
        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                c.writabilityChanged();
            }
        });
        boolean[] inCall = {false};
        List<Boolean> onWritableInsideACall = new ArrayList<>();
        c.bind(new FrameHandler() {
            @Override
            public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
            }

            @Override
            public void onWritable() {
                onWritableInsideACall.add(inCall[0]);
            }

            @Override
            public void onClosed(String reason, Throwable cause) {
            }
        });
        try {
            for (boolean flushWithSend : new boolean[] {false, true}) {
                onWritableInsideACall.clear();
                // written, not flushed: past the high-water mark
                c.send(TestFrames.message(1, new byte[SocketOptions.HIGH_WATER_MARK]), null, false);
                assertFalse(c.isWritable());

                inCall[0] = true;
                if (flushWithSend) {
                    c.send(TestFrames.message(1, new byte[16]), null, true);
                } else {
                    c.flush();
                }
                inCall[0] = false;
                assertTrue(c.isWritable(), "the flush handed every byte to the channel");
                assertEquals(List.of(), onWritableInsideACall, "onWritable ran inside the handler's own call");

                ch.runPendingTasks();
                assertEquals(List.of(false), onWritableInsideACall, "onWritable once, after the call returned");
                ch.releaseOutbound();
            }
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
