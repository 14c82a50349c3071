package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.spi.FrameHandlerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A test {@link FrameHandler}: records frames (payload copied), writability and the close; in echo
 * mode it also sends every frame straight back from the I/O thread.
 */
class RecordingHandler implements FrameHandler {
    final FrameConnection connection;
    private final boolean echo;
    final BlockingQueue<TestFrames.Frame> frames = new LinkedBlockingQueue<>();
    final AtomicInteger closedCalls = new AtomicInteger();
    final AtomicInteger writableCalls = new AtomicInteger();
    final AtomicInteger framesOffIoThread = new AtomicInteger();
    private final CountDownLatch closed = new CountDownLatch(1);
    volatile String closedReason;
    volatile Throwable closedCause;
    /** A frame type whose arrival makes onFrame throw, or -1. */
    volatile int throwOnType = -1;
    /** Frames offered with a holder buffer, and (when {@link #keepHolders}) a reference to each such payload. */
    final AtomicInteger holderFrames = new AtomicInteger();
    final BlockingQueue<SlabBuffer> kept = new LinkedBlockingQueue<>();
    volatile boolean keepHolders;

    RecordingHandler(FrameConnection connection, boolean echo) {
        this.connection = connection;
        this.echo = echo;
    }

    /** Hands out new handlers and keeps each for the test to find. */
    static final class Factory implements FrameHandlerFactory {
        final BlockingQueue<RecordingHandler> created = new LinkedBlockingQueue<>();
        private final boolean echo;

        Factory(boolean echo) {
            this.echo = echo;
        }

        @Override
        public FrameHandler newHandler(FrameConnection connection) {
            RecordingHandler h = new RecordingHandler(connection, echo);
            created.add(h);
            return h;
        }

        RecordingHandler next() throws InterruptedException {
            RecordingHandler h = created.poll(60, TimeUnit.SECONDS);
            assertNotNull(h, "no connection arrived");
            return h;
        }
    }

    @Override
    public void onFrame(int type, int flags, int streamId, int credit, MemorySegment payload) {
        if (!connection.inIoThread()) {
            framesOffIoThread.incrementAndGet();
        }
        if (type == throwOnType) {
            throw new IllegalStateException("handler refuses frame type " + type);
        }
        byte[] bytes = payload.toArray(ValueLayout.JAVA_BYTE);
        if (echo) {
            SlabBuffer b = TestFrames.frame(type, flags, streamId, credit, bytes);
            connection.send(b, null, true);
        } else {
            frames.add(new TestFrames.Frame(type, flags, streamId, credit, bytes));
        }
    }

    @Override
    public boolean onFrame(int type, int flags, int streamId, int credit, SlabBuffer holder, long offset, int length) {
        holderFrames.incrementAndGet();
        boolean keep = keepHolders;
        if (keep) {
            // before the frame is recorded, so that a test that saw the frame sees this too
            kept.add(holder.retainedSlice(offset, length));
        }
        onFrame(type, flags, streamId, credit, holder.segment(), offset, length);
        return keep;
    }

    @Override
    public void onWritable() {
        writableCalls.incrementAndGet();
    }

    @Override
    public void onClosed(String reason, Throwable cause) {
        closedReason = reason;
        closedCause = cause;
        closedCalls.incrementAndGet();
        closed.countDown();
    }

    TestFrames.Frame nextFrame() throws InterruptedException {
        TestFrames.Frame f = frames.poll(60, TimeUnit.SECONDS);
        assertNotNull(f, "no frame arrived");
        return f;
    }

    /** Asserts that what arrived is a HELLO then exactly these MESSAGE payloads, credit = index (as {@link TestFrames#messageStream}). */
    void assertMessageStream(List<byte[]> payloads) throws InterruptedException {
        assertEquals(FrameType.HELLO, nextFrame().type());
        for (int i = 0; i < payloads.size(); i++) {
            TestFrames.Frame f = nextFrame();
            assertEquals(i, f.credit());
            assertArrayEquals(payloads.get(i), f.payload(), "frame " + i);
        }
        assertTrue(frames.isEmpty());
    }

    void awaitClosed() throws InterruptedException {
        assertTrue(closed.await(60, TimeUnit.SECONDS), "connection did not close");
    }

    boolean isClosed() {
        return closed.getCount() == 0;
    }
}
