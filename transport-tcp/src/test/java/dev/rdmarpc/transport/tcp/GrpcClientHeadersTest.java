package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** gRPC's client-side header rules: request headers, grpc-timeout, statuses and metadata read back from a server. */
class GrpcClientHeadersTest {
    @Test
    void requestHeadersCarryWhatGrpcServersNeed() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-a"), "v");
        md.put(Metadata.Key.binary("x-b-bin"), new byte[] {1, 2, 3});
        Http2Headers h = GrpcClientHeaders.request("pkg.Svc/M", "host:1", true, TimeUnit.SECONDS.toNanos(2), md);
        assertEquals("POST", h.method().toString());
        assertEquals("https", h.scheme().toString());
        assertEquals("/pkg.Svc/M", h.path().toString());
        assertEquals("host:1", h.authority().toString());
        assertEquals("application/grpc", h.get("content-type").toString());
        assertEquals("trailers", h.get("te").toString());
        assertEquals("2000000u", h.get("grpc-timeout").toString());
        assertEquals("v", h.get("x-a").toString());
        assertEquals("AQID", h.get("x-b-bin").toString());
        assertFalse(GrpcClientHeaders.request("a/b", "h", false, 0, null).contains("grpc-timeout"));
    }

    @Test
    void everyValueOfAKeyIsSentInOrder() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.ascii("x-a"), "1");
        md.put(Metadata.Key.binary("x-b-bin"), new byte[] {(byte) 0xff});
        md.put(Metadata.Key.ascii("x-a"), "2");
        Http2Headers h = GrpcClientHeaders.request("a/b", "h", false, 0, md);
        assertEquals(List.of("1", "2"), h.getAll("x-a").stream().map(CharSequence::toString).toList());
        assertEquals(List.of("/w"), h.getAll("x-b-bin").stream().map(CharSequence::toString).toList());
        assertFalse(h.contains("grpc-timeout"));
    }

    @Test
    void timeoutsUseAtMostEightDigitsAndNeverShorten() {
        assertEquals("1n", GrpcClientHeaders.timeout(1));
        assertEquals("99999999n", GrpcClientHeaders.timeout(99_999_999));
        assertEquals("100000u", GrpcClientHeaders.timeout(100_000_000));
        assertEquals("100001u", GrpcClientHeaders.timeout(100_000_001));
        assertEquals(TimeUnit.DAYS.toNanos(1), GrpcHeaders.timeoutNanos(GrpcClientHeaders.timeout(TimeUnit.DAYS.toNanos(1))));
        assertEquals("2562048H", GrpcClientHeaders.timeout(Long.MAX_VALUE)); // 2^63-1 ns, rounded up
    }

    @Test
    void statusesAreReadAsTheSpecSays() {
        Status s = GrpcClientHeaders.status(new DefaultHttp2Headers().set("grpc-status", "5").set("grpc-message", "a%20b%E2%9C%93%"));
        assertEquals(Status.Code.NOT_FOUND, s.getCode());
        assertEquals("a b✓%", s.getDescription());
        assertEquals(Status.Code.UNAVAILABLE, GrpcClientHeaders.status(new DefaultHttp2Headers().status("503")).getCode());
        assertEquals(Status.Code.UNKNOWN, GrpcClientHeaders.status(new DefaultHttp2Headers().set("grpc-status", "x")).getCode());
        assertNull(GrpcClientHeaders.refusal(new DefaultHttp2Headers().status("200").set("content-type", "application/grpc+proto")));
        assertEquals(Status.Code.PERMISSION_DENIED, GrpcClientHeaders.refusal(new DefaultHttp2Headers().status("403")).getCode());
        assertNull(GrpcClientHeaders.refusal(new DefaultHttp2Headers().status("500").set("grpc-status", "13")),
                "grpc-status decides over the HTTP status");
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, GrpcClientHeaders.reset(0xb).getCode());
        assertEquals(Status.Code.INTERNAL, GrpcClientHeaders.reset(0x1234).getCode());
    }

    @Test
    void responseMetadataLeavesOutTheStatusAndPseudoHeaders() {
        Metadata md = GrpcClientHeaders.metadata(new DefaultHttp2Headers().status("200").set("content-type", "application/grpc")
                .set("grpc-status", "0").set("grpc-message", "m").set("x-k", "v").set("x-k-bin", "AQI"));
        assertEquals("v", md.get(Metadata.Key.ascii("x-k")));
        assertArrayEquals(new byte[] {1, 2}, md.get(Metadata.Key.binary("x-k-bin")));
        assertEquals(2, md.size());
    }

    @Test
    void aResponseHeaderThatIsNotValidMetadataIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> GrpcClientHeaders.metadata(
                new DefaultHttp2Headers(false).status("200").set("x-k", new AsciiString(new byte[] {'a', 0x07}, false))));
        assertThrows(IllegalArgumentException.class, () -> GrpcClientHeaders.metadata(
                new DefaultHttp2Headers(false).status("200").set("x k", "v")));
    }
}
