package dev.rdmarpc.it;

import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.spi.FrameConnection;
import dev.rdmarpc.core.spi.FrameHandler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One end of an in-JVM frame path that stands in for an RDMA queue pair in tests: it is created unconnected (a queue
 * pair in INIT: frames sent to it wait), connected to the peer's end by id (RTR/RTS), or discarded (destroyed: a
 * frame sent to it closes the sender's end, as a retry-exceeded completion does). Frames are delivered to the
 * handler on the end's own thread.
 */
final class PairedPath implements FrameConnection {
    static final String TRANSPORT = "paired";
    private static final Map<Long, PairedPath> ENDS = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong(1);

    final long id = IDS.getAndIncrement();
    private final FrameConnection base;
    private final ExecutorService io;
    private volatile Thread ioThread;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Frames sent and not yet flushed; guarded by itself. */
    private final List<byte[]> unflushed = new ArrayList<>();
    /** Frames that arrived before {@link #connect}; guarded by {@code this}. */
    private final List<byte[]> early = new ArrayList<>();
    private volatile FrameHandler handler;
    private volatile long peerId;
    private volatile boolean connected;
    private volatile boolean gone;
    private volatile int maxInboundPayload = FrameHeader.DEFAULT_MAX_PAYLOAD;

    private PairedPath(FrameConnection base) {
        this.base = base;
        this.io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "paired-path-" + id);
            t.setDaemon(true);
            ioThread = t;
            return t;
        });
    }

    /** A new unconnected end beside {@code base}. */
    static PairedPath create(FrameConnection base) {
        PairedPath p = new PairedPath(base);
        ENDS.put(p.id, p);
        return p;
    }

    /** Connects this end to the peer's end: frames sent go there, frames arriving go to {@code h}. */
    void connect(long peer, FrameHandler h) {
        List<byte[]> waiting;
        synchronized (this) {
            peerId = peer;
            handler = h;
            connected = true;
            waiting = new ArrayList<>(early);
            early.clear();
        }
        for (byte[] frames : waiting) {
            io.execute(() -> dispatch(frames));
        }
    }

    /** Destroys an end that was never connected (an abandoned offer). */
    void discard() {
        gone = true;
        ENDS.remove(id);
        io.shutdown();
    }

    private void arrive(byte[] frames) {
        synchronized (this) {
            if (!connected) {
                early.add(frames);
                return;
            }
        }
        if (!gone && !closed.get()) {
            try {
                io.execute(() -> dispatch(frames));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // this end closed meanwhile: the frames are lost with it, as on a destroyed queue pair
            }
        }
    }

    private void dispatch(byte[] frames) {
        if (closed.get()) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(frames.length);
            MemorySegment.copy(MemorySegment.ofArray(frames), 0, seg, 0, frames.length);
            long off = 0;
            while (off < frames.length) {
                FrameHeader.validate(seg, off, maxInboundPayload, false);
                int len = FrameHeader.payloadLength(seg, off);
                handler.onFrame(FrameHeader.type(seg, off), FrameHeader.flags(seg, off), FrameHeader.streamId(seg, off),
                        FrameHeader.credit(seg, off), seg, off + FrameHeader.SIZE, len);
                off += FrameHeader.SIZE + len;
            }
        } catch (Throwable t) {
            closeWith(t.getMessage() != null ? t.getMessage() : t.toString(), t);
        }
    }

    @Override
    public void send(SlabBuffer head, SlabBuffer tail, boolean flush) {
        try {
            if (closed.get()) {
                return;
            }
            int hl = head.length();
            int tl = tail == null ? 0 : tail.length();
            byte[] bytes = new byte[hl + tl];
            MemorySegment.copy(head.segment(), 0, MemorySegment.ofArray(bytes), 0, hl);
            if (tail != null) {
                MemorySegment.copy(tail.segment(), 0, MemorySegment.ofArray(bytes), hl, tl);
            }
            synchronized (unflushed) {
                unflushed.add(bytes);
            }
        } finally {
            head.release();
            if (tail != null) {
                tail.release();
            }
        }
        if (flush) {
            flush();
        }
    }

    @Override
    public void flush() {
        synchronized (unflushed) {
            if (unflushed.isEmpty() || closed.get()) {
                return;
            }
            PairedPath peer = ENDS.get(peerId);
            if (peer == null || peer.gone) {
                unflushed.clear();
                closeWith("the peer's end of the path is gone (its transition failed or it was closed)", null);
                return;
            }
            for (byte[] frames : unflushed) {
                peer.arrive(frames);
            }
            unflushed.clear();
        }
    }

    @Override
    public boolean isWritable() {
        return true;
    }

    @Override
    public void setMaxInboundPayload(int maxPayload) {
        maxInboundPayload = maxPayload;
    }

    @Override
    public int preferredChunkSize() {
        return 64 << 10;
    }

    @Override
    public void close(String reason) {
        closeWith(reason, null);
    }

    private void closeWith(String reason, Throwable cause) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        gone = true;
        ENDS.remove(id);
        FrameHandler h = handler;
        if (h != null) {
            h.onClosed(reason, cause);
        }
        base.close(reason);
        io.shutdown();
    }

    @Override
    public boolean isOpen() {
        return !closed.get();
    }

    @Override
    public boolean inIoThread() {
        return Thread.currentThread() == ioThread;
    }

    @Override
    public SocketAddress remoteAddress() {
        return base.remoteAddress();
    }

    @Override
    public SocketAddress localAddress() {
        return base.localAddress();
    }

    @Override
    public String transportName() {
        return TRANSPORT;
    }
}
