package dev.rdmarpc.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Size parsing and printing. */
class SizesTest {

    @Test
    void parsesPlainAndBinarySuffixes() {
        assertEquals(64, Sizes.parse("64"));
        assertEquals(64, Sizes.parse("64B"));
        assertEquals(4096, Sizes.parse("4k"));
        assertEquals(65536, Sizes.parse("64KiB"));
        assertEquals(1 << 20, Sizes.parse("1m"));
        assertEquals(1 << 20, Sizes.parse("1MiB"));
        assertEquals(0, Sizes.parse("0"));
    }

    @Test
    void refusesNonsense() {
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("big"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("-1"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("4096m"));
    }

    @Test
    void formatsShort() {
        assertEquals("64B", Sizes.format(64));
        assertEquals("4KiB", Sizes.format(4096));
        assertEquals("1MiB", Sizes.format(1 << 20));
        assertEquals("1536B", Sizes.format(1536));
    }
}
