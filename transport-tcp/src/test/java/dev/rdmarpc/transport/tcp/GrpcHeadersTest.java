package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.RequestHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** gRPC's HTTP/2 header rules as the server applies them. */
class GrpcHeadersTest {
    private static Http2Headers request() {
        return new DefaultHttp2Headers().method("POST").path("/pkg.Svc/M").add("content-type", "application/grpc");
    }

    @Test
    void grpcTimeoutInEveryUnitAndMalformedOnes() {
        assertEquals(0, GrpcHeaders.timeoutNanos(null));
        assertEquals(TimeUnit.HOURS.toNanos(2), GrpcHeaders.timeoutNanos("2H"));
        assertEquals(TimeUnit.MINUTES.toNanos(3), GrpcHeaders.timeoutNanos("3M"));
        assertEquals(TimeUnit.SECONDS.toNanos(99999999), GrpcHeaders.timeoutNanos("99999999S"));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(250), GrpcHeaders.timeoutNanos("250m"));
        assertEquals(7_000, GrpcHeaders.timeoutNanos("7u"));
        assertEquals(1, GrpcHeaders.timeoutNanos("0n"), "a timeout of 0 is already over, not 'none'");
        assertEquals(-1, GrpcHeaders.timeoutNanos("123456789S"), "at most 8 digits");
        assertEquals(-1, GrpcHeaders.timeoutNanos("10x"));
        assertEquals(-1, GrpcHeaders.timeoutNanos("S"));
        assertEquals(-1, GrpcHeaders.timeoutNanos("-1S"));
    }

    @Test
    void contentTypesMethodsAndPaths() {
        assertNull(GrpcHeaders.check(request()));
        assertTrue(GrpcHeaders.isGrpcContentType("application/grpc+proto"));
        assertTrue(GrpcHeaders.isGrpcContentType("application/grpc;charset=utf-8"));
        assertFalse(GrpcHeaders.isGrpcContentType("application/grpcx"));
        assertFalse(GrpcHeaders.isGrpcContentType("application/json"));
        assertEquals(415, GrpcHeaders.check(request().set("content-type", "text/plain")).httpStatus());
        Http2Headers noType = request();
        noType.remove("content-type");
        assertEquals(415, GrpcHeaders.check(noType).httpStatus());
        assertEquals(405, GrpcHeaders.check(request().method("GET")).httpStatus());
        GrpcHeaders.Refusal badPath = GrpcHeaders.check(request().path("pkg.Svc/M"));
        assertEquals(404, badPath.httpStatus());
        assertEquals(Status.Code.UNIMPLEMENTED, badPath.status().getCode());
    }

    /** The request HEADERS frame core gets for {@code h}, decoded as core decodes it. */
    private static RequestHeaders toCore(Http2Headers h, long timeoutNanos) {
        return toCore(new CoreFrames(SlabPool.shared()), h, timeoutNanos);
    }

    private static RequestHeaders toCore(CoreFrames frames, Http2Headers h, long timeoutNanos) {
        SlabBuffer frame = frames.requestHeaders(7, true, h, timeoutNanos);
        try {
            MemorySegment bytes = frame.segment().asSlice(0, frame.length());
            assertEquals(bytes.byteSize() - FrameHeader.SIZE, FrameHeader.payloadLength(bytes, 0));
            assertEquals(FrameType.HEADERS, FrameHeader.type(bytes, 0));
            assertEquals(FrameFlags.END_STREAM, FrameHeader.flags(bytes, 0));
            assertEquals(7, FrameHeader.streamId(bytes, 0));
            return Frames.decodeRequestHeaders(bytes.asSlice(FrameHeader.SIZE));
        } finally {
            frame.release();
        }
    }

    @Test
    void requestHeadersReachCoreWithTheirPathDeadlineAndMetadata() {
        Http2Headers h = request().authority("example.test:443").add("te", "trailers").add("grpc-timeout", "1S")
                .add("x-id", "42").add("x-blob-bin", "AAEC/w").add("x-blob-bin", "AAEC/w==,AQ");
        RequestHeaders r = toCore(h, 1_000_000_000L);
        assertEquals("pkg.Svc/M", r.path());
        assertEquals("example.test:443", r.authority());
        assertEquals(1_000_000_000L, r.timeoutNanos());
        Metadata md = r.metadata();
        assertEquals("42", md.get(Metadata.Key.ascii("x-id")));
        List<byte[]> blobs = md.getAll(Metadata.Key.binary("x-blob-bin"));
        assertEquals(3, blobs.size(), "padded and unpadded base64, comma-separated values apart");
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xff}, blobs.get(0));
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xff}, blobs.get(1));
        assertArrayEquals(new byte[] {1}, blobs.get(2));
        assertFalse(md.keys().contains("te"));
        assertFalse(md.keys().contains("grpc-timeout"));
        assertFalse(md.keys().contains("content-type"));
        assertEquals(2, md.keys().size());
    }

    @Test
    void aRequestWithoutAuthorityOrMetadataAndANonAsciiPath() {
        RequestHeaders r = toCore(request().path("/pkg.Svc/\u00e9t\u00e9"), 0);
        assertEquals("pkg.Svc/\u00e9t\u00e9", r.path());
        assertEquals("", r.authority());
        assertEquals(0, r.timeoutNanos());
        assertTrue(r.metadata() == null || r.metadata().isEmpty());
    }

    @Test
    void headersThatAreNotMetadataAreRefusedWithNothingLeftAllocated() {
        SlabPool pool = new SlabPool(1 << 20, true);
        CoreFrames frames = new CoreFrames(pool);
        // unvalidated header lists: what a client could put on the wire, which HPACK decoding may let through
        for (Http2Headers bad : List.of(unvalidated("x-bad-bin", "!!!"), unvalidated("x b", "1"),
                unvalidated("x-ctl", "a\u0001b"), unvalidated("x-high", "caf\u00e9"))) {
            assertThrows(IllegalArgumentException.class, () -> frames.requestHeaders(1, false, bad, 0), bad.toString());
            assertEquals(0, pool.inUseBuffers(), "slab buffers left allocated after refusing " + bad);
            // what the refused list left half written is not in the next frame
            RequestHeaders next = toCore(frames, request().path("/pkg.Svc/Next").add("x-ok", "1"), 0);
            assertEquals("pkg.Svc/Next", next.path());
            assertEquals("1", next.metadata().get(Metadata.Key.ascii("x-ok")));
            assertEquals(0, pool.inUseBuffers(), "slab buffers left allocated after " + bad);
        }
    }

    private static Http2Headers unvalidated(String name, String value) {
        return new DefaultHttp2Headers(false).method("POST").path("/pkg.Svc/M").add("content-type", "application/grpc")
                .add(name, value);
    }

    @Test
    void responsesAndTrailersWithoutMetadataAreSharedAndReadOnly() {
        assertSame(GrpcHeaders.response(null), GrpcHeaders.response(new Metadata()));
        assertSame(GrpcHeaders.trailers(Status.OK, null, false), GrpcHeaders.trailers(Status.OK, new Metadata(), false));
        assertEquals("200", GrpcHeaders.response(null).status().toString());
        assertEquals("application/grpc", GrpcHeaders.response(null).get("content-type").toString());
        Http2Headers unavailable = GrpcHeaders.trailers(Status.UNAVAILABLE, null, true);
        assertEquals("200", unavailable.status().toString());
        assertEquals("14", unavailable.get("grpc-status").toString());
        assertThrows(UnsupportedOperationException.class, () -> GrpcHeaders.response(null).add("x", "y"));
        Http2Headers refused = GrpcHeaders.httpError(new GrpcHeaders.Refusal(415, Status.INTERNAL));
        assertEquals("415", refused.status().toString());
        assertEquals("13", refused.get("grpc-status").toString());
    }

    @Test
    void trailersCarryTheStatusAndAPercentEncodedMessage() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.binary("x-t-bin"), new byte[] {0, 1, 2, (byte) 0xff});
        Http2Headers only = GrpcHeaders.trailers(Status.NOT_FOUND.withDescription("no key 100% \u00e9\n"), md, true);
        assertEquals("200", only.status().toString());
        assertEquals("application/grpc", only.get("content-type").toString());
        assertEquals("5", only.get("grpc-status").toString());
        assertEquals("no key 100%25 %C3%A9%0A", only.get("grpc-message").toString());
        assertEquals("AAEC/w", only.get("x-t-bin").toString());
        Http2Headers after = GrpcHeaders.trailers(Status.OK, null, false);
        assertNull(after.status());
        assertEquals("0", after.get("grpc-status").toString());
        assertNull(after.get("grpc-message"));
    }
}
