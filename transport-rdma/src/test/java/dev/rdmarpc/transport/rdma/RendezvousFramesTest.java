package dev.rdmarpc.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.ProtocolException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** RTS / FIN / credit frame encodings and the checks a received RTS must pass. */
class RendezvousFramesTest {

    @Test
    void rtsCarriesTheFrameItStandsFor() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(64);
            RendezvousFrames.writeRts(s, 0, 5, FrameType.MESSAGE, FrameFlags.BEGIN | FrameFlags.END, 1 << 20,
                    0x7f0012345000L, 0xabcd01, 42);
            FrameHeader.validate(s, 0, 1 << 20, false);
            assertEquals(FrameType.RTS, FrameHeader.type(s, 0));
            assertEquals(RendezvousFrames.RTS_SIZE, FrameHeader.payloadLength(s, 0));
            assertEquals(5, FrameHeader.streamId(s, 0));
            long p = FrameHeader.SIZE;
            assertEquals(FrameType.MESSAGE, RendezvousFrames.rtsType(s, p));
            assertEquals(FrameFlags.BEGIN | FrameFlags.END, RendezvousFrames.rtsFlags(s, p));
            assertEquals(1 << 20, RendezvousFrames.rtsLength(s, p));
            assertEquals(0x7f0012345000L, RendezvousFrames.rtsAddress(s, p));
            assertEquals(0xabcd01, RendezvousFrames.rtsRkey(s, p));
            assertEquals(42, RendezvousFrames.rtsToken(s, p));
            RendezvousFrames.validateRts(s, 0, 1 << 20);

            RendezvousFrames.writeFin(s, 0, 5, 42);
            FrameHeader.validate(s, 0, 1 << 20, false);
            assertEquals(FrameType.FIN, FrameHeader.type(s, 0));
            assertEquals(42, RendezvousFrames.finToken(s, FrameHeader.SIZE));

            RendezvousFrames.writeCredit(s, 0, 17);
            FrameHeader.validate(s, 0, 1 << 20, false);
            assertEquals(FrameType.WINDOW, FrameHeader.type(s, 0));
            assertEquals(0, FrameHeader.streamId(s, 0));
            assertEquals(17, FrameHeader.credit(s, 0));
        }
    }

    @Test
    void badRtsIsAProtocolError() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(64);
            RendezvousFrames.writeRts(s, 0, 3, FrameType.MESSAGE, 0, (1 << 20) + 1, 0x1000, 1, 1);
            ProtocolException e = assertThrows(ProtocolException.class, () -> RendezvousFrames.validateRts(s, 0, 1 << 20));
            assertTrue(e.getMessage().contains("announces a 1048577-byte MESSAGE payload"), e.getMessage());

            RendezvousFrames.writeRts(s, 0, 3, FrameType.PING, 0, 10, 0x1000, 1, 1);
            e = assertThrows(ProtocolException.class, () -> RendezvousFrames.validateRts(s, 0, 1 << 20));
            assertTrue(e.getMessage().contains("carries a PING frame"), e.getMessage());

            RendezvousFrames.writeRts(s, 0, 3, FrameType.TRAILERS, FrameFlags.BEGIN, 10, 0x1000, 1, 1);
            e = assertThrows(ProtocolException.class, () -> RendezvousFrames.validateRts(s, 0, 1 << 20));
            assertTrue(e.getMessage().contains("not allowed on TRAILERS"), e.getMessage());

            RendezvousFrames.writeRts(s, 0, 3, FrameType.MESSAGE, 0, 0, 0x1000, 1, 1);
            assertThrows(ProtocolException.class, () -> RendezvousFrames.validateRts(s, 0, 1 << 20));
        }
    }
}
