package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;
import dev.rdmarpc.core.testing.LockCheck;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link FrameConnection} with no socket: what core sends is kept as whole frames for the test to read, and the
 * test plays the peer and the I/O thread by handing frames to core's handler ({@link #deliver}). A frame the handler
 * refuses (it throws) closes the connection, as a transport does.
 */
final class FakeConnection implements FrameConnection {
    /** One frame core sent. */
    record Sent(int type, int flags, int streamId, int credit, byte[] payload) {
        MemorySegment payloadSegment() {
            MemorySegment s = Arena.ofAuto().allocate(Math.max(1, payload.length));
            MemorySegment.copy(payload, 0, s, ValueLayout.JAVA_BYTE, 0, payload.length);
            return s.asSlice(0, payload.length);
        }
    }

    final BlockingQueue<Sent> sent = new LinkedBlockingQueue<>();
    private final SlabPool pool;
    private FrameHandler handler;
    private volatile boolean open = true;
    volatile boolean writable = true;
    volatile String closeReason;
    /** The thread that plays the I/O thread: the one delivering frames. */
    private volatile Thread ioThread;

    FakeConnection(SlabPool pool) {
        this.pool = pool;
    }

    void bind(FrameHandler h) {
        this.handler = h;
    }

    /** Runs {@code deliveries} (calls of {@link #deliver}) as one read burst, as a transport reports a read. */
    void readBurst(Runnable deliveries) {
        handler.onReadBurstStart();
        try {
            deliveries.run();
        } finally {
            handler.onReadBurstEnd();
        }
    }

    /** Hands one frame to core as the transport would, on the calling thread; a refused frame closes the connection. */
    void deliver(SlabBuffer frame) {
        byte[] bytes = frame.segment().asSlice(0, frame.length()).toArray(ValueLayout.JAVA_BYTE);
        frame.release();
        deliver(bytes);
    }

    void deliver(byte[] bytes) {
        MemorySegment seg = Arena.ofAuto().allocate(bytes.length);
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, 0, bytes.length);
        ioThread = Thread.currentThread();
        try {
            FrameHeader.validate(seg, 0, FrameHeader.MAX_PAYLOAD_LIMIT, false);
            handler.onFrame(FrameHeader.type(seg, 0), FrameHeader.flags(seg, 0), FrameHeader.streamId(seg, 0),
                    FrameHeader.credit(seg, 0), seg, FrameHeader.SIZE, bytes.length - FrameHeader.SIZE);
        } catch (RuntimeException e) {
            closeWith(e.getMessage(), e);
        } finally {
            ioThread = null;
        }
    }

    /** The next frame core sent, waiting for it up to a bound that only ends a hung test. */
    Sent next() throws InterruptedException {
        Sent s = sent.poll(60, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("core sent no frame");
        }
        return s;
    }

    /** The next frame of {@code type}, skipping (and returning nothing of) frames of other types. */
    Sent next(int type) throws InterruptedException {
        while (true) {
            Sent s = next();
            if (s.type() == type) {
                return s;
            }
        }
    }

    @Override
    public void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
        try {
            LockCheck.assertSendOrder("FakeConnection.send"); // core sends under its locks: in their order
            if (!open) {
                return;
            }
            int len = head.length() + (tail == null ? 0 : tail.length());
            byte[] all = new byte[len];
            MemorySegment.copy(head.segment(), ValueLayout.JAVA_BYTE, 0, all, 0, head.length());
            if (tail != null) {
                MemorySegment.copy(tail.segment(), ValueLayout.JAVA_BYTE, 0, all, head.length(), tail.length());
            }
            MemorySegment seg = MemorySegment.ofArray(all);
            int at = 0;
            while (at < len) {
                int payload = FrameHeader.payloadLength(seg, at);
                byte[] p = new byte[payload];
                System.arraycopy(all, at + FrameHeader.SIZE, p, 0, payload);
                sent.add(new Sent(FrameHeader.type(seg, at), FrameHeader.flags(seg, at), FrameHeader.streamId(seg, at),
                        FrameHeader.credit(seg, at), p));
                at += FrameHeader.SIZE + payload;
            }
        } finally {
            head.release();
            if (tail != null) {
                tail.release();
            }
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public boolean isWritable() {
        return writable;
    }

    /** Makes the connection writable again and tells core, as a transport does when it drains. */
    void drained() {
        writable = true;
        handler.onWritable();
    }

    @Override
    public void setMaxInboundPayload(int maxPayload) {
    }

    @Override
    public int preferredChunkSize() {
        return 64 * 1024;
    }

    @Override
    public void close(String reason) {
        closeWith(reason, null);
    }

    private void closeWith(String reason, Throwable cause) {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            closeReason = reason;
        }
        handler.onClosed(reason, cause);
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean inIoThread() {
        return Thread.currentThread() == ioThread;
    }

    @Override
    public SocketAddress remoteAddress() {
        return new InetSocketAddress("127.0.0.1", 1);
    }

    @Override
    public SocketAddress localAddress() {
        return new InetSocketAddress("127.0.0.1", 2);
    }

    @Override
    public String transportName() {
        return "fake";
    }
}
