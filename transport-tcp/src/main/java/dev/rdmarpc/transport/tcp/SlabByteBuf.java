package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.buffer.SlabBuffer;
import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A Netty {@link ByteBuf} over the content {@code [0, length())} of a {@link SlabBuffer}, without
 * copying: it reports the slab's native address, so epoll and io_uring hand it to the kernel as it
 * is (with or without {@code sun.misc.Unsafe}), and it releases the slab buffer when Netty releases
 * it, which Netty does exactly once: after the bytes are written, or when the write fails or the
 * channel is closed. Also the link of {@link WriteQueue}.
 */
final class SlabByteBuf extends AbstractReferenceCountedByteBuf {
    private static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Where this wrapper goes back when Netty releases it. */
    private final SlabByteBufPool pool;
    /** The wrapped buffer, whose reference this wrapper holds until Netty releases it; null while pooled. */
    private SlabBuffer buffer;
    /** The slab block; only {@code [0, length)} is reachable through this ByteBuf (its capacity). */
    private MemorySegment segment;
    private int length;
    /** For memory the transport does not own (see {@link #initForeign}): what runs on release instead; else null. */
    private Runnable foreignDone;

    /** Next send in a {@link WriteQueue} (written before publication, read after taking). */
    SlabByteBuf next;
    /** The buffer that must follow this one on the wire with nothing in between, or null. */
    SlabByteBuf tail;
    /** Set on a queued send's head: its bytes count as the connection's own (see {@link TcpFrameConnection}). */
    boolean own;

    SlabByteBuf(SlabByteBufPool pool) {
        super(Integer.MAX_VALUE);
        this.pool = pool;
    }

    /** Points this (new or reused) wrapper at {@code buffer}, taking over the caller's reference. */
    void init(SlabBuffer buffer) {
        int len = buffer.length();
        this.buffer = buffer;
        this.segment = buffer.segment();
        this.length = len;
        maxCapacity(len);
        resetRefCnt();
        setIndex(0, len);
        markReaderIndex().markWriterIndex();
    }

    /**
     * Points this (new or reused) wrapper at native memory the transport does not own, such as an application's
     * attachment; its release runs {@code done} (once) instead of releasing a slab buffer.
     */
    void initForeign(MemorySegment body, Runnable done) {
        int len = (int) body.byteSize();
        this.buffer = null;
        this.foreignDone = done;
        this.segment = body;
        this.length = len;
        maxCapacity(len);
        resetRefCnt();
        setIndex(0, len);
        markReaderIndex().markWriterIndex();
    }

    /** Whether {@link #putInFront} can take {@code front}: this wrapper is unsent and its slab buffer has the room. */
    boolean hasRoomFor(SlabByteBuf front) {
        SlabBuffer b = buffer;
        return b != null && readerIndex() == 0 && refCnt() == 1 && front.readableBytes() <= b.frontRoom();
    }

    /**
     * Copies {@code front}'s readable bytes into the room before this buffer's content (see {@link #hasRoomFor}), so
     * that this one buffer carries both, and releases {@code front}. Before this wrapper is handed to Netty.
     */
    void putInFront(SlabByteBuf front) {
        int n = front.readableBytes();
        SlabBuffer joined = buffer.prepend(front.segment, front.readerIndex(), n);
        init(joined);
        front.release();
    }

    @Override
    protected void deallocate() {
        SlabBuffer b = buffer;
        Runnable done = foreignDone;
        buffer = null;
        foreignDone = null;
        segment = null;
        next = null;
        tail = null;
        own = false;
        if (b != null) {
            b.release();
        }
        pool.giveBack(this);
        if (done != null) {
            done.run();
        }
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        if (newCapacity == length) {
            return this;
        }
        throw new UnsupportedOperationException("a slab-backed buffer has a fixed capacity of " + length);
    }

    @Override
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    @Override
    public boolean isContiguous() {
        return true;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new UnsupportedOperationException("direct buffer");
    }

    @Override
    public int arrayOffset() {
        throw new UnsupportedOperationException("direct buffer");
    }

    @Override
    public boolean hasMemoryAddress() {
        return true;
    }

    @Override
    public long memoryAddress() {
        ensureAccessible();
        return segment.address();
    }

    @Override
    public int nioBufferCount() {
        return 1;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int len) {
        checkIndex(index, len);
        return segment.asSlice(index, len).asByteBuffer();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int len) {
        return nioBuffer(index, len);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int len) {
        return new ByteBuffer[] {nioBuffer(index, len)};
    }

    @Override
    public ByteBuf copy(int index, int len) {
        checkIndex(index, len);
        return alloc().directBuffer(len).writeBytes(nioBuffer(index, len));
    }

    // ---- bulk transfers ----

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int len) {
        checkDstIndex(index, len, dstIndex, dst.capacity());
        dst.setBytes(dstIndex, nioBuffer(index, len));
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int len) {
        checkDstIndex(index, len, dstIndex, dst.length);
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, index, dst, dstIndex, len);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int len = dst.remaining();
        checkIndex(index, len);
        dst.put(nioBuffer(index, len));
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int len) throws IOException {
        checkIndex(index, len);
        byte[] tmp = new byte[len];
        getBytes(index, tmp, 0, len);
        out.write(tmp);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int len) throws IOException {
        return out.write(nioBuffer(index, len));
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int len) throws IOException {
        return out.write(nioBuffer(index, len), position);
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int len) {
        checkSrcIndex(index, len, srcIndex, src.capacity());
        src.getBytes(srcIndex, nioBuffer(index, len));
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int len) {
        checkSrcIndex(index, len, srcIndex, src.length);
        MemorySegment.copy(src, srcIndex, segment, ValueLayout.JAVA_BYTE, index, len);
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        nioBuffer(index, src.remaining()).put(src);
        return this;
    }

    @Override
    public int setBytes(int index, InputStream in, int len) throws IOException {
        checkIndex(index, len);
        byte[] tmp = in.readNBytes(len);
        setBytes(index, tmp, 0, tmp.length);
        return tmp.length == 0 && len > 0 ? -1 : tmp.length;
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int len) throws IOException {
        return in.read(nioBuffer(index, len));
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int len) throws IOException {
        return in.read(nioBuffer(index, len), position);
    }

    // ---- single values (AbstractByteBuf has checked the index) ----

    @Override
    protected byte _getByte(int index) {
        return segment.get(ValueLayout.JAVA_BYTE, index);
    }

    @Override
    protected short _getShort(int index) {
        return segment.get(SHORT_BE, index);
    }

    @Override
    protected short _getShortLE(int index) {
        return segment.get(SHORT_LE, index);
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return (_getByte(index) & 0xff) << 16 | (_getByte(index + 1) & 0xff) << 8 | _getByte(index + 2) & 0xff;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return _getByte(index) & 0xff | (_getByte(index + 1) & 0xff) << 8 | (_getByte(index + 2) & 0xff) << 16;
    }

    @Override
    protected int _getInt(int index) {
        return segment.get(INT_BE, index);
    }

    @Override
    protected int _getIntLE(int index) {
        return segment.get(INT_LE, index);
    }

    @Override
    protected long _getLong(int index) {
        return segment.get(LONG_BE, index);
    }

    @Override
    protected long _getLongLE(int index) {
        return segment.get(LONG_LE, index);
    }

    @Override
    protected void _setByte(int index, int value) {
        segment.set(ValueLayout.JAVA_BYTE, index, (byte) value);
    }

    @Override
    protected void _setShort(int index, int value) {
        segment.set(SHORT_BE, index, (short) value);
    }

    @Override
    protected void _setShortLE(int index, int value) {
        segment.set(SHORT_LE, index, (short) value);
    }

    @Override
    protected void _setMedium(int index, int value) {
        _setByte(index, value >>> 16);
        _setByte(index + 1, value >>> 8);
        _setByte(index + 2, value);
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        _setByte(index, value);
        _setByte(index + 1, value >>> 8);
        _setByte(index + 2, value >>> 16);
    }

    @Override
    protected void _setInt(int index, int value) {
        segment.set(INT_BE, index, value);
    }

    @Override
    protected void _setIntLE(int index, int value) {
        segment.set(INT_LE, index, value);
    }

    @Override
    protected void _setLong(int index, long value) {
        segment.set(LONG_BE, index, value);
    }

    @Override
    protected void _setLongLE(int index, long value) {
        segment.set(LONG_LE, index, value);
    }
}
