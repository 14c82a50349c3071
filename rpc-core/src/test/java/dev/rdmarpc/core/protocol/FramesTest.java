package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FramesTest {
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    private static MemorySegment payload(SlabBuffer b) {
        return b.segment().asSlice(FrameHeader.SIZE, FrameHeader.payloadLength(b.segment(), 0));
    }

    private <T> T roundTrip(SlabBuffer b, int type, Function<MemorySegment, T> decode) {
        try {
            assertEquals(type, FrameHeader.type(b.segment(), 0));
            assertEquals(b.length(), FrameHeader.SIZE + FrameHeader.payloadLength(b.segment(), 0));
            FrameHeader.validate(b.segment(), 0, 1 << 20, type == FrameType.HELLO);
            return decode.apply(payload(b));
        } finally {
            b.release();
        }
    }

    @Test
    void helloCarriesLimitsAndCapabilities() {
        Hello h = new Hello(Hello.VERSION, 1 << 20, 65536, 4 << 20, Map.of(Hello.CAP_RDMA, new byte[]{1, 2, 3}));
        Hello back = roundTrip(Frames.hello(pool, h), FrameType.HELLO, Frames::decodeHello);
        assertEquals(1 << 20, back.initialWindow());
        assertEquals(65536, back.maxFramePayload());
        assertEquals(4 << 20, back.maxMessageSize());
        assertArrayEquals(new byte[]{1, 2, 3}, back.capabilities().get(Hello.CAP_RDMA));
    }

    @Test
    void helloWithAnotherVersionOrMagicIsRejected() {
        SlabBuffer b = Frames.hello(pool, new Hello(Hello.VERSION, 1 << 20, 65536, 1, Map.of()));
        b.segment().set(ValueLayout.JAVA_SHORT_UNALIGNED, FrameHeader.SIZE + 4, (short) 9);
        ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decodeHello(payload(b)));
        assertTrue(e.getMessage().contains("unsupported protocol version 9"), e.getMessage());
        b.segment().set(ValueLayout.JAVA_INT_UNALIGNED, FrameHeader.SIZE, 0x1234);
        e = assertThrows(ProtocolException.class, () -> Frames.decodeHello(payload(b)));
        assertTrue(e.getMessage().contains("not an rdmarpc endpoint"), e.getMessage());
        b.release();
    }

    @Test
    void requestHeadersCarryAsciiAndBinaryMetadata() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-user"), "alice");
        md.put(Metadata.Key.binary("x-trace-bin"), new byte[]{0, (byte) 0xff, 7});
        md.put(Metadata.Key.ascii("x-user"), "bob");
        RequestHeaders rh = roundTrip(Frames.requestHeaders(pool, 5, false, "pkg.Svc/Do", "host:1", 12345, md),
                FrameType.HEADERS, Frames::decodeRequestHeaders);
        assertEquals("pkg.Svc/Do", rh.path());
        assertEquals("host:1", rh.authority());
        assertEquals(12345, rh.timeoutNanos());
        assertEquals(java.util.List.of("alice", "bob"), rh.metadata().getAll(Metadata.Key.ascii("x-user")));
        assertArrayEquals(new byte[]{0, (byte) 0xff, 7}, rh.metadata().get(Metadata.Key.binary("x-trace-bin")));
    }

    @Test
    void trailersCancelAndGoAwayCarryStatus() {
        Metadata md = new Metadata().put(Metadata.Key.ascii("k"), "v");
        Trailers t = roundTrip(Frames.trailers(pool, 3, Status.NOT_FOUND.withDescription("no such key ü"), md),
                FrameType.TRAILERS, Frames::decodeTrailers);
        assertEquals(Status.Code.NOT_FOUND, t.status().getCode());
        assertEquals("no such key ü", t.status().getDescription());
        assertEquals("v", t.metadata().get(Metadata.Key.ascii("k")));
        Status c = roundTrip(Frames.cancel(pool, 3, Status.DEADLINE_EXCEEDED), FrameType.CANCEL, Frames::decodeCancel);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, c.getCode());
        Frames.GoAway g = roundTrip(Frames.goAway(pool, 11, Status.UNAVAILABLE.withDescription("bye")), FrameType.GOAWAY, Frames::decodeGoAway);
        assertEquals(11, g.lastStreamId());
        assertEquals("bye", g.status().getDescription());
        assertEquals(77L, roundTrip(Frames.ping(pool, 77L, false), FrameType.PING, Frames::decodePing));
    }

    @Test
    void truncatedAndOverlongPayloadsAreProtocolErrors() {
        SlabBuffer b = Frames.trailers(pool, 1, Status.OK, null);
        MemorySegment full = payload(b);
        assertThrows(ProtocolException.class, () -> Frames.decodeTrailers(full.asSlice(0, full.byteSize() - 1)));
        SlabBuffer p = Frames.ping(pool, 1, false);
        MemorySegment ping = payload(p);
        ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decodePing(ping.asSlice(0, 4)));
        assertTrue(e.getMessage().startsWith("truncated PING"), e.getMessage());
        b.release();
        p.release();
    }

    @Test
    void badMetadataNamesAreProtocolErrors() {
        Metadata md = new Metadata().put(Metadata.Key.ascii("good"), "v");
        SlabBuffer b = Frames.responseHeaders(pool, 1, md);
        b.segment().set(ValueLayout.JAVA_BYTE, FrameHeader.SIZE + 4, (byte) ' ');
        ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decodeResponseHeaders(payload(b)));
        assertTrue(e.getMessage().contains("bad metadata"), e.getMessage());
        b.release();
    }
}
