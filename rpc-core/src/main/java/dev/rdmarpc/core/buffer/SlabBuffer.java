package dev.rdmarpc.core.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A reference-counted block of a {@link Slab}. Whoever holds a reference owns it and must
 * {@link #release()} it exactly once; handing a buffer to a method that says it "takes ownership"
 * passes that duty on. The pool reuses the handle object, so nothing is allocated per use.
 */
public final class SlabBuffer {
    private static final VarHandle REF_CNT;

    static {
        try {
            REF_CNT = MethodHandles.lookup().findVarHandle(SlabBuffer.class, "refCnt", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SlabPool pool;
    private final Slab slab;
    private final MemorySegment segment;
    private final int sizeClass;
    private final SlabBuffer parent;
    /** Bytes of the block just before this view that are this view's alone (see {@link #prepend}); 0 for most. */
    private final int frontRoom;
    /** The shared slab this block was carved from, or null for a large block (a slab of its own). */
    final CarvedSlab home;
    private volatile int refCnt;
    private int length;
    Throwable allocationSite;
    /** The pool's trim tick when this large block was last released (guarded by the large-block cache). */
    int releasedAtTick;

    SlabBuffer(SlabPool pool, Slab slab, MemorySegment segment, int sizeClass, CarvedSlab home) {
        this.pool = pool;
        this.slab = slab;
        this.segment = segment;
        this.sizeClass = sizeClass;
        this.parent = null;
        this.frontRoom = 0;
        this.home = home;
    }

    private SlabBuffer(SlabBuffer parent, MemorySegment slice, int length, int frontRoom) {
        this.pool = parent.pool;
        this.slab = parent.slab;
        this.segment = slice;
        this.sizeClass = -1;
        this.parent = parent;
        this.frontRoom = frontRoom;
        this.home = null;
        this.length = length;
        this.refCnt = 1;
    }

    /** The whole block (its capacity). */
    public MemorySegment segment() {
        return segment;
    }

    /** The slab this block lives in. */
    public Slab slab() {
        return slab;
    }

    /** Offset of this block inside its slab. */
    public long offsetInSlab() {
        return segment.address() - slab.address();
    }

    /** Native address of the block. */
    public long address() {
        return segment.address();
    }

    public int capacity() {
        return (int) segment.byteSize();
    }

    /** Bytes of content, from offset 0. */
    public int length() {
        return length;
    }

    public SlabBuffer setLength(int newLength) {
        if (newLength < 0 || newLength > segment.byteSize()) {
            throw new IndexOutOfBoundsException("length " + newLength + " outside capacity " + segment.byteSize());
        }
        this.length = newLength;
        return this;
    }

    /** The content, {@code [0, length)}. Allocates a view object. */
    public MemorySegment content() {
        return segment.asSlice(0, length);
    }

    /** Adds a reference. */
    public SlabBuffer retain() {
        SlabBuffer root = root();
        while (true) {
            int c = root.refCnt;
            if (c <= 0) {
                throw new IllegalStateException("retain of a released slab buffer");
            }
            if (REF_CNT.compareAndSet(root, c, c + 1)) {
                return this;
            }
        }
    }

    /**
     * A view of {@code [offset, offset+len)} holding its own reference to this buffer's block;
     * release the view, not the block, for that reference.
     */
    public SlabBuffer retainedSlice(long offset, int len) {
        retain();
        return new SlabBuffer(root(), segment.asSlice(offset, len), len, 0);
    }

    /**
     * Like {@link #retainedSlice}, with the {@code offset} bytes before the view as its {@link #frontRoom}: only for a
     * block no one else has a view of.
     */
    SlabBuffer retainedSliceWithFrontRoom(int offset, int len) {
        retain();
        return new SlabBuffer(root(), segment.asSlice(offset, len), len, offset);
    }

    /**
     * Bytes just before this buffer in its block that are its alone, for {@link #prepend} to fill: what
     * {@link SlabPool#allocate(int, int)} gave it (less what was prepended since); 0 for other buffers.
     */
    public int frontRoom() {
        return frontRoom;
    }

    /**
     * Copies {@code length} bytes of {@code src} from {@code srcOffset} into the room just before this buffer's content
     * and returns one buffer of both: its content is those bytes followed by this buffer's content. Takes over this
     * buffer's reference: the caller uses (and releases) the buffer returned, not this one. No copy of this buffer's
     * content is made.
     *
     * @throws IllegalArgumentException when {@code length} is more than {@link #frontRoom()}
     */
    public SlabBuffer prepend(MemorySegment src, long srcOffset, int length) {
        if (length < 0 || length > frontRoom) {
            throw new IllegalArgumentException("cannot prepend " + length + " bytes into a front room of " + frontRoom);
        }
        if (length == 0) {
            return this;
        }
        SlabBuffer root = root();
        long start = segment.address() - root.segment.address() - length;
        MemorySegment widened = root.segment.asSlice(start, segment.byteSize() + length);
        MemorySegment.copy(src, srcOffset, widened, 0, length);
        root.retain();
        SlabBuffer joined = new SlabBuffer(root, widened, this.length + length, frontRoom - length);
        release();
        return joined;
    }

    /** Drops a reference; the last one returns the block to its pool. Returns true if it was the last. */
    public boolean release() {
        if (parent != null) {
            if (refCnt != 1) {
                throw new IllegalStateException("slice released twice");
            }
            refCnt = 0;
            return parent.release();
        }
        while (true) {
            int c = refCnt;
            if (c <= 0) {
                throw new IllegalStateException("slab buffer released more often than retained");
            }
            if (REF_CNT.compareAndSet(this, c, c - 1)) {
                if (c == 1) {
                    pool.recycle(this);
                    return true;
                }
                return false;
            }
        }
    }

    /** Current reference count (of the underlying block). */
    public int refCnt() {
        return root().refCnt;
    }

    int sizeClass() {
        return sizeClass;
    }

    void onAllocate() {
        length = 0;
        REF_CNT.setRelease(this, 1);
    }

    private SlabBuffer root() {
        return parent == null ? this : parent;
    }

    @Override
    public String toString() {
        return "SlabBuffer{capacity=" + capacity() + ", length=" + length + ", refCnt=" + refCnt() + "}";
    }
}
