package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HEADERS and TRAILERS decoding stops at the metadata limit, counted as key + value + 32 per entry. */
class MetadataLimitTest {
    private static final Metadata.Key<String> KEY = Metadata.Key.ascii("x-key");
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    /** Two entries of "x-key" (5 bytes) with {@code valueLength}-byte values. */
    private static Metadata twoEntries(int valueLength) {
        return new Metadata().put(KEY, "a".repeat(valueLength)).put(KEY, "b".repeat(valueLength));
    }

    private static MemorySegment payload(SlabBuffer b) {
        return b.segment().asSlice(FrameHeader.SIZE, FrameHeader.payloadLength(b.segment(), 0));
    }

    @Test
    void metadataBytesCountKeysValuesAndThirtyTwoPerEntry() {
        assertEquals(2 * (32 + 5 + 10), Frames.metadataBytes(twoEntries(10)));
        assertEquals(0, Frames.metadataBytes(null));
        assertEquals(0, Frames.metadataBytes(new Metadata()));
    }

    @Test
    void requestHeadersAtTheLimitDecodeAndOneByteMoreDoNot() {
        Metadata md = twoEntries(100);
        int exact = (int) Frames.metadataBytes(md);
        SlabBuffer b = Frames.requestHeaders(pool, 1, false, "/s/M", "host:1", 0, md);
        try {
            MemorySegment p = payload(b);
            RequestHeaders rh = Frames.decodeRequestHeaders(p, 0, (int) p.byteSize(), null, exact);
            assertEquals(2, rh.metadata().size());
            MetadataTooLargeException e = assertThrows(MetadataTooLargeException.class,
                    () -> Frames.decodeRequestHeaders(p, 0, (int) p.byteSize(), null, exact - 1));
            assertEquals(exact - 1, e.maxBytes());
            Status s = e.toStatus();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode());
            assertTrue(s.getDescription().startsWith("Header size exceeded max allowed size (" + (exact - 1) + ")"), s.getDescription());
        } finally {
            b.release();
        }
    }

    @Test
    void aHugeValueIsRefusedBeforeItIsCopied() {
        SlabBuffer b = Frames.responseHeaders(pool, 2, new Metadata().put(KEY, "v".repeat(100_000)));
        try {
            MemorySegment p = payload(b);
            // the value length alone passes the limit: refused from the entry's lengths, its bytes never copied
            assertThrows(MetadataTooLargeException.class, () -> Frames.decodeResponseHeaders(p, 0, (int) p.byteSize(), 8192));
            assertEquals(1, Frames.decodeResponseHeaders(p, 0, (int) p.byteSize()).size());
        } finally {
            b.release();
        }
    }

    @Test
    void manyEntriesCountTheirOverhead() {
        Metadata md = new Metadata();
        for (int i = 0; i < 300; i++) {
            md.put(KEY, "");
        }
        // 300 entries of 5 key bytes: 300 * 37 = 11100 bytes, over 8 KiB although the bytes themselves are 1500
        SlabBuffer b = Frames.responseHeaders(pool, 2, md);
        try {
            MemorySegment p = payload(b);
            assertThrows(MetadataTooLargeException.class, () -> Frames.decodeResponseHeaders(p, 0, (int) p.byteSize(), 8192));
        } finally {
            b.release();
        }
    }

    @Test
    void trailersOverTheLimitKeepTheStatusTheyCarried() {
        SlabBuffer b = Frames.trailers(pool, 2, Status.NOT_FOUND.withDescription("gone"), twoEntries(1000));
        try {
            MemorySegment p = payload(b);
            MetadataTooLargeException e = assertThrows(MetadataTooLargeException.class,
                    () -> Frames.decodeTrailers(p, 0, (int) p.byteSize(), 1024));
            assertEquals(Status.Code.NOT_FOUND, e.trailersStatus().getCode());
            assertTrue(e.getMessage().contains("TRAILERS"), e.getMessage());
            assertEquals(2, Frames.decodeTrailers(p, 0, (int) p.byteSize(), 8192).metadata().size());
        } finally {
            b.release();
        }
    }

    /**
     * A client HEADERS payload for /s/M whose metadata is one "x-key" entry declaring {@code declaredValueLength} bytes
     * of value followed by {@code actualValueBytes} bytes, then {@code tail} (more entries, counted in {@code count}).
     */
    private static MemorySegment headersWith(int count, int declaredValueLength, int actualValueBytes, byte[] tail) {
        byte[] path = "/s/M".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(8 + 2 + path.length + 2 + 2 + 2 + 5 + 4 + actualValueBytes + tail.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0).putShort((short) path.length).put(path).putShort((short) 0).putShort((short) count)
                .putShort((short) 5).put("x-key".getBytes(StandardCharsets.US_ASCII)).putInt(declaredValueLength)
                .put(new byte[actualValueBytes]).put(tail);
        return MemorySegment.ofArray(b.array());
    }

    @Test
    void aValueLengthRunningPastTheFrameIsMalformedNotTooLarge() {
        MemorySegment p = headersWith(1, Integer.MAX_VALUE, 16, new byte[0]);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> Frames.decodeRequestHeaders(p, 0, (int) p.byteSize(), null, 8192));
        assertTrue(e.getMessage().startsWith("truncated HEADERS payload"), e.getMessage());
        assertThrows(ProtocolException.class, () -> Frames.decodeRequestHeaders(p, 0, (int) p.byteSize(), null));
    }

    @Test
    void aTruncatedEntryAfterOneOverTheLimitIsStillMalformed() {
        // the first entry passes the limit; the second declares a 1000-byte key of which the frame holds 3
        byte[] tail = ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN).putShort((short) 1000).put(new byte[3]).array();
        MemorySegment p = headersWith(2, 200, 200, tail);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> Frames.decodeRequestHeaders(p, 0, (int) p.byteSize(), null, 100));
        assertTrue(e.getMessage().startsWith("truncated HEADERS payload"), e.getMessage());
        MemorySegment wellFormed = headersWith(1, 200, 200, new byte[0]);
        assertThrows(MetadataTooLargeException.class, () -> Frames.decodeRequestHeaders(wellFormed, 0, (int) wellFormed.byteSize(), null, 100),
                "the same entry in a well-formed block is too large, not malformed");
    }
}
