package dev.rdmarpc.core.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Repeated header strings decode to the same string; collisions, long and non-ASCII strings decode correctly. */
class Utf8CacheTest {

    private static MemorySegment at(Arena arena, String s, int offset) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        MemorySegment seg = arena.allocate(offset + b.length);
        MemorySegment.copy(b, 0, seg, java.lang.foreign.ValueLayout.JAVA_BYTE, offset, b.length);
        return seg;
    }

    @Test
    void theSameBytesGiveTheSameStringAndOthersTheirOwn() {
        try (Arena arena = Arena.ofConfined()) {
            Utf8Cache cache = new Utf8Cache(2);
            String path = "/kv.KeyValue/Get";
            String first = cache.decode(at(arena, path, 3), 3, path.getBytes(StandardCharsets.UTF_8).length);
            assertEquals(path, first);
            assertSame(first, cache.decode(at(arena, path, 0), 0, path.length()), "a repeat is not decoded again");
            for (int i = 0; i < 20; i++) {
                String other = "/svc.S/M" + i;
                assertEquals(other, cache.decode(at(arena, other, 1), 1, other.length()));
            }
            assertEquals(path, cache.decode(at(arena, path, 0), 0, path.length()), "evicted entries decode afresh");
            String prefix = path.substring(0, 10);
            assertEquals(prefix, cache.decode(at(arena, path, 0), 0, 10), "same start, other length");
            String accented = "/café.Menü/Bestellen";
            int n = accented.getBytes(StandardCharsets.UTF_8).length;
            assertEquals(accented, cache.decode(at(arena, accented, 0), 0, n));
            String longOne = "/" + "x".repeat(Utf8Cache.MAX_CACHED_LENGTH + 10);
            String a = cache.decode(at(arena, longOne, 0), 0, longOne.length());
            String b = cache.decode(at(arena, longOne, 0), 0, longOne.length());
            assertEquals(longOne, a);
            assertEquals(a, b);
            assertNotSame(a, b, "long strings are not remembered");
            assertEquals("", cache.decode(at(arena, "", 0), 0, 0));
        }
    }
}
