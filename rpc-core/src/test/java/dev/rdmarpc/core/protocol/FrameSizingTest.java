package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HEADERS and TRAILERS encoded within a peer's max frame payload; descriptions cut on UTF-8 character boundaries. */
class FrameSizingTest {
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    private static Trailers decode(SlabBuffer b) {
        try {
            int len = FrameHeader.payloadLength(b.segment(), 0);
            return Frames.decodeTrailers(b.segment(), FrameHeader.SIZE, len);
        } finally {
            b.release();
        }
    }

    @Test
    void aShortDescriptionIsLeftAlone() {
        byte[] raw = "fine".getBytes(StandardCharsets.UTF_8);
        assertSame(raw, Frames.truncateUtf8(raw, 4));
    }

    @Test
    void truncationNeverSplitsACharacterAndEndsWithAnEllipsis() {
        String text = "é€😀".repeat(50); // 2-, 3- and 4-byte characters
        byte[] raw = text.getBytes(StandardCharsets.UTF_8);
        for (int max = 3; max < 40; max++) {
            byte[] cut = Frames.truncateUtf8(raw, max);
            assertTrue(cut.length <= max, max + ": " + cut.length);
            String back = new String(cut, StandardCharsets.UTF_8);
            assertTrue(back.endsWith("…"), back);
            String kept = back.substring(0, back.length() - 1);
            assertTrue(text.startsWith(kept), max + ": kept " + kept);
            assertArrayEquals(kept.getBytes(StandardCharsets.UTF_8), java.util.Arrays.copyOf(cut, cut.length - 3),
                    "the kept bytes decode without replacement characters");
        }
        assertEquals(0, Frames.truncateUtf8(raw, 2).length, "no room for the mark: empty");
    }

    @Test
    void trailersCutALongDescriptionToTheFrameLimit() {
        String description = "no such key: " + "k".repeat(5 * 1024);
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-why"), "because");
        SlabBuffer b = Frames.trailers(pool, 3, Status.NOT_FOUND.withDescription(description), md, 1024);
        assertEquals(1024, FrameHeader.payloadLength(b.segment(), 0), "filled to the limit exactly");
        Trailers t = decode(b);
        assertEquals(Status.Code.NOT_FOUND, t.status().getCode());
        assertTrue(t.status().getDescription().startsWith("no such key: kkk"), t.status().getDescription());
        assertTrue(t.status().getDescription().endsWith("…"), t.status().getDescription());
        assertEquals("because", t.metadata().get(Metadata.Key.ascii("x-why")), "the metadata is kept");
    }

    @Test
    void trailersWhoseMetadataAloneIsTooLargeAreRefused() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-big"), "v".repeat(2000));
        FrameTooLargeException e = assertThrows(FrameTooLargeException.class,
                () -> Frames.trailers(pool, 3, Status.OK.withDescription("done"), md, 1024));
        assertEquals(1024, e.maxPayload());
        assertEquals(1 + 4 + 4 + 2 + 2 + 5 + 4 + 2000, e.payloadSize(), "the size of the TRAILERS as asked");
        assertTrue(e.getMessage().contains("exceed the peer's max frame size 1024"), e.getMessage());
    }

    @Test
    void headersTooLargeForThePeerAreRefusedBeforeAnythingIsAllocated() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-big"), "v".repeat(2000));
        FrameTooLargeException response = assertThrows(FrameTooLargeException.class,
                () -> Frames.responseHeaders(pool, 3, md, 1024));
        assertTrue(response.getMessage().startsWith("response HEADERS of "), response.getMessage());
        byte[] path = "pkg.Svc/Do".getBytes(StandardCharsets.US_ASCII);
        byte[] authority = "host:1".getBytes(StandardCharsets.US_ASCII);
        FrameTooLargeException request = assertThrows(FrameTooLargeException.class,
                () -> Frames.requestHeaders(pool, 1, false, path, authority, 0, md, 1024));
        assertTrue(request.getMessage().startsWith("request HEADERS of "), request.getMessage());
        SlabBuffer fits = Frames.requestHeaders(pool, 1, false, path, authority, 0, md, 4096);
        fits.release();
    }
}
