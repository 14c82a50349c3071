package dev.rdmarpc.core.protocol;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LimitsCapabilityTest {

    @Test
    void encodesTwelveLittleEndianBytesAndDecodesThemBack() {
        LimitsCapability limits = new LimitsCapability(100, 8192);
        byte[] block = limits.encode();
        assertArrayEquals(new byte[]{1, 0, 0, 0, 100, 0, 0, 0, 0, 0x20, 0, 0}, block);
        assertEquals(limits, LimitsCapability.decode(block));
    }

    @Test
    void anAttachmentLimitMakesTheBlockSixteenBytes() {
        LimitsCapability limits = new LimitsCapability(100, 8192, 64 << 20);
        byte[] block = limits.encode();
        assertArrayEquals(new byte[]{1, 0, 0, 0, 100, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 4}, block);
        assertEquals(limits, LimitsCapability.decode(block));
        assertTrue(limits.acceptsAttachments());
        LimitsCapability without = LimitsCapability.decode(new LimitsCapability(100, 8192).encode());
        assertEquals(LimitsCapability.NO_ATTACHMENTS, without.maxAttachmentBytes(), "a 12-byte block takes no attachments");
        assertEquals(LimitsCapability.NO_ATTACHMENTS, LimitsCapability.NONE.maxAttachmentBytes());
        byte[] negative = new LimitsCapability(1, 1, 0).encode();
        negative[15] = (byte) 0x80;
        assertRefused(negative, "attachment bytes");
        assertRefused(new byte[14], "has 14 bytes, expected 12 or 16");
    }

    @Test
    void aHelloWithoutTheBlockAdvertisesNoLimit() {
        Hello hello = new Hello(Hello.VERSION, 1 << 20, 1 << 20, 4 << 20, Map.of(Hello.CAP_RDMA, new byte[48]));
        assertSame(LimitsCapability.NONE, LimitsCapability.of(hello));
        assertEquals(Integer.MAX_VALUE, LimitsCapability.NONE.maxConcurrentStreams());
        assertEquals(Integer.MAX_VALUE, LimitsCapability.NONE.maxMetadataBytes());
    }

    @Test
    void aHelloWithTheBlockAdvertisesItsValues() {
        Hello hello = new Hello(Hello.VERSION, 1 << 20, 1 << 20, 4 << 20,
                Map.of(Hello.CAP_LIMITS, new LimitsCapability(0, 1024).encode()));
        assertEquals(new LimitsCapability(0, 1024), LimitsCapability.of(hello));
    }

    @Test
    void malformedBlocksAreProtocolErrors() {
        assertRefused(new byte[11], "has 11 bytes, expected 12");
        byte[] version = new LimitsCapability(1, 1).encode();
        version[0] = 2;
        assertRefused(version, "version 2");
        byte[] reserved = new LimitsCapability(1, 1).encode();
        reserved[2] = 1;
        assertRefused(reserved, "reserved");
        byte[] streams = new LimitsCapability(1, 1).encode();
        streams[7] = (byte) 0x80;
        assertRefused(streams, "concurrent streams");
        byte[] metadata = new LimitsCapability(1, 1).encode();
        metadata[8] = 0;
        assertRefused(metadata, "0 metadata bytes");
    }

    @Test
    void valuesAreCheckedWhenBuilt() {
        assertThrows(IllegalArgumentException.class, () -> new LimitsCapability(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> new LimitsCapability(1, 0));
    }

    private static void assertRefused(byte[] block, String expected) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> LimitsCapability.decode(block));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
