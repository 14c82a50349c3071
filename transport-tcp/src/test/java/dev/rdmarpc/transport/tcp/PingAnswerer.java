package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.spi.FrameHandlerFactory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A test {@link FrameHandler} that answers every PING with its ACK from the I/O thread, as core does, and counts the
 * PINGs and ACKs it received; other frames are ignored.
 */
final class PingAnswerer implements FrameHandler {
    final FrameConnection connection;
    final AtomicLong pings = new AtomicLong();
    final AtomicLong acks = new AtomicLong();
    /** Data of the last ACK received, or -1. */
    volatile long lastAck = -1;

    PingAnswerer(FrameConnection connection) {
        this.connection = connection;
    }

    /** Hands out new answerers and keeps each for the test to find. */
    static final class Factory implements FrameHandlerFactory {
        final BlockingQueue<PingAnswerer> created = new LinkedBlockingQueue<>();

        @Override
        public FrameHandler newHandler(FrameConnection connection) {
            PingAnswerer h = new PingAnswerer(connection);
            created.add(h);
            return h;
        }

        PingAnswerer next() throws InterruptedException {
            PingAnswerer h = created.poll(60, TimeUnit.SECONDS);
            assertNotNull(h, "no connection arrived");
            return h;
        }
    }

    @Override
    public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
        if (type != FrameType.PING) {
            return;
        }
        long data = Frames.decodePing(payload);
        if ((flags & FrameFlags.ACK) != 0) {
            lastAck = data;
            acks.incrementAndGet();
        } else {
            pings.incrementAndGet();
            connection.send(Frames.ping(SlabPool.shared(), data, true));
        }
    }

    @Override
    public void onClosed(String reason, Throwable cause) {
    }
}
