package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    @Test
    void metadataSkipsTransportHeadersAndDecodesBinaryValues() {
        Http2Headers h = request().add("te", "trailers").add("grpc-timeout", "1S").add("x-id", "42")
                .add("x-blob-bin", "AAEC/w").add("x-blob-bin", "AAEC/w==");
        Metadata md = GrpcHeaders.metadata(h);
        assertEquals("42", md.get(Metadata.Key.ascii("x-id")));
        assertEquals(2, md.getAll(Metadata.Key.binary("x-blob-bin")).size(), "padded and unpadded base64");
        assertArrayEquals(new byte[] {0, 1, 2, (byte) 0xff}, md.getAll(Metadata.Key.binary("x-blob-bin")).get(1));
        assertFalse(md.keys().contains("te"));
        assertFalse(md.keys().contains("grpc-timeout"));
        assertFalse(md.keys().contains("content-type"));
        assertThrows(IllegalArgumentException.class, () -> GrpcHeaders.metadata(request().add("x-bad-bin", "!!!")));
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
