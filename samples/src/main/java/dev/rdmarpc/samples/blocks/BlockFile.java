package dev.rdmarpc.samples.blocks;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file of fixed-size blocks, mapped into memory once and shared by every call: reads hand out slices of the
 * mapping (sent from it with no copy), writes copy into it. The mapping lives until {@link #close()}, which must come
 * after the server that serves it has stopped.
 */
public final class BlockFile implements AutoCloseable {
    /** Smallest block size accepted. */
    public static final int MIN_BLOCK_SIZE = 512;
    /** Largest block size accepted. */
    public static final int MAX_BLOCK_SIZE = 1 << 20;

    private final Arena arena;
    private final MemorySegment mapping;
    private final int blockSize;
    private final long blockCount;

    private BlockFile(Arena arena, MemorySegment mapping, int blockSize) {
        this.arena = arena;
        this.mapping = mapping;
        this.blockSize = blockSize;
        this.blockCount = mapping.byteSize() / blockSize;
    }

    /**
     * Maps {@code file} read-write. A file that is missing or empty is created with {@code blocksIfNew} blocks filled
     * with {@link BlockPattern}; an existing one must hold a whole number of blocks.
     */
    @SuppressWarnings("MustBeClosedChecker") // the arena lives as long as the BlockFile: close() closes it
    public static BlockFile open(Path file, int blockSize, long blocksIfNew) throws IOException {
        if (Integer.bitCount(blockSize) != 1 || blockSize < MIN_BLOCK_SIZE || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size must be a power of two from " + MIN_BLOCK_SIZE + " to "
                    + MAX_BLOCK_SIZE + ", not " + blockSize);
        }
        boolean fresh = !Files.exists(file) || Files.size(file) == 0;
        if (fresh && blocksIfNew <= 0) {
            throw new IllegalArgumentException("a new store needs at least one block, not " + blocksIfNew);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            long size = fresh ? Math.multiplyExact(blocksIfNew, (long) blockSize) : channel.size();
            if (size % blockSize != 0) {
                throw new IllegalArgumentException(file + " holds " + size + " bytes, not a whole number of "
                        + blockSize + "-byte blocks");
            }
            // mapping past the end grows the file to the mapped size
            MemorySegment mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            if (fresh) {
                BlockPattern.fill(mapping, 0);
            }
            return new BlockFile(arena, mapping, blockSize);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Bytes per block. */
    public int blockSize() {
        return blockSize;
    }

    /** Blocks in the file. */
    public long blockCount() {
        return blockCount;
    }

    /** Whether {@code count} blocks from {@code first} lie inside the file (and {@code count} is positive). */
    public boolean contains(long first, int count) {
        return first >= 0 && count > 0 && first <= blockCount - count;
    }

    /** The mapped bytes of {@code count} blocks from {@code first}; valid until {@link #close()}. */
    public MemorySegment blocks(long first, int count) {
        if (!contains(first, count)) {
            throw new IndexOutOfBoundsException(count + " blocks from " + first + " are not inside 0.." + blockCount);
        }
        return mapping.asSlice(first * blockSize, (long) count * blockSize);
    }

    /** Writes the mapped pages back to the file. */
    public void force() {
        mapping.force();
    }

    /** Unmaps the file; no slice of it may be read after this. */
    @Override
    public void close() {
        arena.close();
    }
}
