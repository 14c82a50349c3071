package dev.rdmarpc.core.internal.call;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FlagBits}: each flag is set and cleared alone, up to the sixteenth bit of its short. */
class FlagBitsTest {
    /** The bits in a field, as a stream keeps them. */
    private static final class Holder implements FlagBits {
        short bits;

        @Override
        public short flagBits() {
            return bits;
        }

        @Override
        public void flagBits(short b) {
            bits = b;
        }
    }

    @Test
    void eachFlagChangesAloneUpToTheHighestBit() {
        Holder h = new Holder();
        for (int i = 0; i < 16; i++) {
            int flag = 1 << i;
            assertFalse(h.has(flag));
            h.set(flag);
            assertTrue(h.has(flag));
        }
        assertEquals((short) 0xFFFF, h.bits);
        h.clear(1 << 15);
        h.set(1 << 3, false);
        assertFalse(h.has(1 << 15));
        assertFalse(h.has(1 << 3));
        assertTrue(h.has(1 << 14));
        assertTrue(h.has(1 << 4));
        h.set(1 << 3, true);
        assertEquals((short) 0x7FFF, h.bits);
    }
}
