package dev.rdmarpc.core.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameHeaderTest {
    private final MemorySegment seg = Arena.ofAuto().allocate(64);

    private ProtocolException reject(boolean first) {
        return assertThrows(ProtocolException.class, () -> FrameHeader.validate(seg, 0, 1024, first));
    }

    @Test
    void roundTripsEveryField() {
        FrameHeader.write(seg, 0, 77, FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END, 9, 123456);
        assertEquals(77, FrameHeader.payloadLength(seg, 0));
        assertEquals(FrameType.MESSAGE, FrameHeader.type(seg, 0));
        assertEquals(FrameFlags.BEGIN | FrameFlags.END, FrameHeader.flags(seg, 0));
        assertEquals(9, FrameHeader.streamId(seg, 0));
        assertEquals(123456, FrameHeader.credit(seg, 0));
        assertEquals(0, FrameHeader.reserved(seg, 0));
        assertEquals(77, seg.get(ValueLayout.JAVA_BYTE, 0), "little-endian length");
        assertDoesNotThrow(() -> FrameHeader.validate(seg, 0, 1024, false));
    }

    @Test
    void writesEachFieldAtItsOffsetOverWhateverWasThereAndNothingAround() {
        seg.fill((byte) 0x5a);
        long at = 7; // unaligned, as in a buffer where a header follows odd-sized data
        FrameHeader.write(seg, at, -1, 0xff, 0xff, -3, Integer.MIN_VALUE);
        assertEquals(-1, FrameHeader.payloadLength(seg, at));
        assertEquals(0xff, FrameHeader.type(seg, at));
        assertEquals(0xff, FrameHeader.flags(seg, at));
        assertEquals(0, FrameHeader.reserved(seg, at));
        assertEquals(-3, FrameHeader.streamId(seg, at));
        assertEquals(Integer.MIN_VALUE, FrameHeader.credit(seg, at));
        assertEquals((byte) 0x5a, seg.get(ValueLayout.JAVA_BYTE, at - 1), "the byte before the header");
        assertEquals((byte) 0x5a, seg.get(ValueLayout.JAVA_BYTE, at + FrameHeader.SIZE), "the byte after it");
        FrameHeader.write(seg, at, 1, FrameType.PING, 0, 0, 2);
        assertEquals(1, FrameHeader.payloadLength(seg, at), "the high bytes of a written field are cleared");
        assertEquals(FrameType.PING, FrameHeader.type(seg, at));
        assertEquals(0, FrameHeader.flags(seg, at));
        assertEquals(0, FrameHeader.streamId(seg, at));
        assertEquals(2, FrameHeader.credit(seg, at));
    }

    @Test
    void rejectsUnknownType() {
        FrameHeader.write(seg, 0, 0, 42, 0, 0, 0);
        assertTrue(reject(false).getMessage().contains("unknown frame type 42"));
    }

    @Test
    void rejectsLengthPastTheMaximum() {
        FrameHeader.write(seg, 0, 4096, FrameType.MESSAGE, FrameFlags.BEGIN, 1, 0);
        assertTrue(reject(false).getMessage().contains("exceeds the maximum 1024"));
        FrameHeader.write(seg, 0, -5, FrameType.MESSAGE, FrameFlags.BEGIN, 1, 0);
        assertTrue(reject(false).getMessage().contains("exceeds the maximum"));
    }

    @Test
    void rejectsFlagsReservedBitsAndStreamIds() {
        FrameHeader.write(seg, 0, 0, FrameType.CANCEL, FrameFlags.BEGIN, 1, 0);
        assertTrue(reject(false).getMessage().contains("not allowed on CANCEL"));
        FrameHeader.write(seg, 0, 0, FrameType.MESSAGE, 0, 0, 0);
        assertTrue(reject(false).getMessage().contains("stream id 0"));
        FrameHeader.write(seg, 0, 0, FrameType.PING, 0, 3, 0);
        assertTrue(reject(false).getMessage().contains("stream id 3"));
        FrameHeader.write(seg, 0, 0, FrameType.MESSAGE, 0, 1, 0);
        seg.set(ValueLayout.JAVA_BYTE, FrameHeader.RESERVED_OFFSET, (byte) 1);
        assertTrue(reject(false).getMessage().contains("reserved"));
    }

    @Test
    void firstFrameMustBeHello() {
        FrameHeader.write(seg, 0, 0, FrameType.PING, 0, 0, 0);
        assertTrue(reject(true).getMessage().contains("first frame must be HELLO"));
        FrameHeader.write(seg, 0, 10, FrameType.HELLO, 0, 0, 0);
        assertDoesNotThrow(() -> FrameHeader.validate(seg, 0, 1024, true));
    }

    @Test
    void recognisesHttp2PeersOnBothSides() {
        byte[] preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(preface, 0, seg, ValueLayout.JAVA_BYTE, 0, preface.length);
        assertTrue(reject(true).getMessage().contains("HTTP/2"));
        byte[] settings = {0, 0, 0x12, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        MemorySegment.copy(settings, 0, seg, ValueLayout.JAVA_BYTE, 0, settings.length);
        assertTrue(reject(true).getMessage().contains("HTTP/2 SETTINGS"));
    }
}
