package dev.rdmarpc.samples.blocks;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** What the client compares the blocks it reads with: the server's file, or the pattern a new store starts with. */
sealed interface Reference {

    /** Whether {@code got} equals the store's bytes from byte {@code storeOffset} on. */
    boolean matches(long storeOffset, MemorySegment got);

    /** The store's {@code length} bytes from byte {@code storeOffset} on, in memory of {@code arena}. */
    MemorySegment expected(long storeOffset, long length, Arena arena);

    /** The server's file as this host sees it, mapped read-only in {@code arena} (its size a multiple of the block). */
    static OfFile ofFile(Path file, int blockSize, Arena arena) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return new OfFile(channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena));
        }
    }

    /** The server's file: compared with its current bytes (a shared mapping sees the server's writes). */
    record OfFile(MemorySegment mapping) implements Reference {
        @Override
        public boolean matches(long storeOffset, MemorySegment got) {
            return storeOffset + got.byteSize() <= mapping.byteSize()
                    && mapping.asSlice(storeOffset, got.byteSize()).mismatch(got) == -1;
        }

        @Override
        public MemorySegment expected(long storeOffset, long length, Arena arena) {
            return arena.allocate(length, 8).copyFrom(mapping.asSlice(storeOffset, length));
        }
    }

    /** The pattern of a new store ({@link BlockPattern}). */
    record Pattern(int blockSize) implements Reference {
        @Override
        public boolean matches(long storeOffset, MemorySegment got) {
            if (got.byteSize() % 8 != 0) {
                return false;
            }
            for (long i = 0; i < got.byteSize(); i += 8) {
                if (got.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != BlockPattern.wordAt(storeOffset + i)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public MemorySegment expected(long storeOffset, long length, Arena arena) {
            MemorySegment bytes = arena.allocate(length, 8);
            BlockPattern.fill(bytes, storeOffset);
            return bytes;
        }
    }
}
