package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RawMetadata;
import dev.rdmarpc.core.Status;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.ReadOnlyHttp2Headers;
import io.netty.util.AsciiString;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * gRPC's HTTP/2 header rules (gRPC's PROTOCOL-HTTP2): request validation, {@code grpc-timeout}, metadata with
 * {@code -bin} values in base64, and the response and trailer headers with {@code grpc-status} and a percent-encoded
 * {@code grpc-message}.
 */
final class GrpcHeaders {
    static final AsciiString CONTENT_TYPE = AsciiString.cached("content-type");
    static final AsciiString GRPC = AsciiString.cached("application/grpc");
    static final AsciiString GRPC_STATUS = AsciiString.cached("grpc-status");
    static final AsciiString GRPC_MESSAGE = AsciiString.cached("grpc-message");
    static final AsciiString GRPC_TIMEOUT = AsciiString.cached("grpc-timeout");
    private static final AsciiString OK = AsciiString.cached("200");
    private static final AsciiString POST = AsciiString.cached("POST");
    /** Request headers that are HTTP/2's or gRPC's own and not call metadata. */
    private static final Set<AsciiString> NOT_METADATA = Set.of(CONTENT_TYPE, GRPC_TIMEOUT, AsciiString.cached("te"),
            AsciiString.cached("connection"), AsciiString.cached("host"));
    /** Headers of an answer that are HTTP/2's or gRPC's own: the request's, and the status with its message. */
    static final Set<AsciiString> NOT_ANSWER_METADATA = Stream.concat(NOT_METADATA.stream(),
            Stream.of(GRPC_STATUS, GRPC_MESSAGE)).collect(Collectors.toUnmodifiableSet());
    private static final Map<Character, TimeUnit> UNITS = Map.of('H', TimeUnit.HOURS, 'M', TimeUnit.MINUTES,
            'S', TimeUnit.SECONDS, 'm', TimeUnit.MILLISECONDS, 'u', TimeUnit.MICROSECONDS, 'n', TimeUnit.NANOSECONDS);
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    /** {@code grpc-status} values by code. */
    private static final AsciiString[] STATUS_VALUES = new AsciiString[Status.Code.values().length];
    /**
     * What most calls answer with, made once (the codec only reads the headers it writes): response headers without
     * metadata, and per code trailers (and trailers-only responses) without a description or metadata.
     */
    private static final Http2Headers PLAIN_RESPONSE = ReadOnlyHttp2Headers.serverHeaders(false, OK, CONTENT_TYPE, GRPC);
    private static final Http2Headers[] PLAIN_TRAILERS = new Http2Headers[STATUS_VALUES.length];
    private static final Http2Headers[] PLAIN_TRAILERS_ONLY = new Http2Headers[STATUS_VALUES.length];

    static {
        for (Status.Code c : Status.Code.values()) {
            int v = c.value();
            STATUS_VALUES[v] = AsciiString.cached(Integer.toString(v));
            PLAIN_TRAILERS[v] = ReadOnlyHttp2Headers.trailers(false, GRPC_STATUS, STATUS_VALUES[v]);
            PLAIN_TRAILERS_ONLY[v] = ReadOnlyHttp2Headers.serverHeaders(false, OK, CONTENT_TYPE, GRPC, GRPC_STATUS, STATUS_VALUES[v]);
        }
    }

    private GrpcHeaders() {
    }

    /** Why a request cannot be a gRPC call: the HTTP status and gRPC status to answer with; null when it can. */
    record Refusal(int httpStatus, Status status) {
    }

    /** Checks the method, content type and path of a request as a gRPC server must. */
    static Refusal check(Http2Headers h) {
        if (!POST.contentEquals(h.method())) {
            return new Refusal(405, Status.INTERNAL.withDescription("Method '" + h.method() + "' is not supported: gRPC calls are POST"));
        }
        CharSequence type = h.get(CONTENT_TYPE);
        if (!isGrpcContentType(type)) {
            return new Refusal(415, Status.INTERNAL.withDescription("Content-Type '" + type + "' is not supported: "
                    + "a gRPC call has application/grpc (or application/grpc+proto)"));
        }
        CharSequence path = h.path();
        if (path == null || path.length() < 2 || path.charAt(0) != '/') {
            return new Refusal(404, Status.UNIMPLEMENTED.withDescription("Expected path to start with /: " + path));
        }
        return null;
    }

    /** application/grpc, optionally followed by "+subtype" or ";parameters". */
    static boolean isGrpcContentType(CharSequence type) {
        if (type == null || !AsciiString.regionMatches(type, true, 0, GRPC, 0, GRPC.length())) {
            return false;
        }
        if (type.length() == GRPC.length()) {
            return true;
        }
        char next = type.charAt(GRPC.length());
        return next == '+' || next == ';';
    }

    /**
     * The {@code grpc-timeout} value in nanoseconds (saturated), 0 when absent, or -1 when malformed: at most 8 ASCII
     * digits then one of H M S m u n.
     */
    static long timeoutNanos(CharSequence value) {
        if (value == null) {
            return 0;
        }
        int n = value.length();
        if (n < 2 || n > 9) {
            return -1;
        }
        TimeUnit unit = UNITS.get(value.charAt(n - 1));
        if (unit == null) {
            return -1;
        }
        long amount = 0;
        for (int i = 0; i < n - 1; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            amount = amount * 10 + (c - '0');
        }
        return Math.max(1, unit.toNanos(amount));
    }

    /** Whether request header {@code name} is call metadata: not a pseudo-header, not HTTP/2's or gRPC's own. */
    static boolean isMetadata(CharSequence name) {
        return isMetadata(name, NOT_METADATA);
    }

    private static boolean isMetadata(CharSequence name, Set<AsciiString> notMetadata) {
        return name.length() != 0 && name.charAt(0) != ':' && !notMetadata.contains(AsciiString.of(name));
    }

    /**
     * The call metadata of headers: every header but the pseudo-headers and the transport's own, with {@code -bin}
     * values decoded from base64 (padded or not). (A request's go to core by {@link H2RequestHeaders}.)
     *
     * @throws IllegalArgumentException when a name or value is not valid metadata
     */
    static Metadata metadata(Http2Headers h) {
        return metadata(h, NOT_METADATA);
    }

    /**
     * As {@link #metadata(Http2Headers)}, leaving out the pseudo-headers and {@code notMetadata}. Entries go in as
     * received bytes ({@link RawMetadata#putRaw} checks each name and ASCII value as a typed key would).
     *
     * @throws IllegalArgumentException when a name or value is not valid metadata
     */
    static Metadata metadata(Http2Headers h, Set<AsciiString> notMetadata) {
        Metadata md = new Metadata();
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            CharSequence name = e.getKey();
            if (!isMetadata(name, notMetadata)) {
                continue;
            }
            String key = name.toString();
            AsciiString value = AsciiString.of(e.getValue());
            if (key.endsWith(Metadata.BINARY_SUFFIX)) {
                for (String part : value.toString().split(",", -1)) {
                    RawMetadata.putRaw(md, key, Base64.getDecoder().decode(part.trim()));
                }
            } else {
                RawMetadata.putRaw(md, key, value.toByteArray());
            }
        }
        return md;
    }

    /** Response headers: {@code :status 200}, the gRPC content type and {@code md}. */
    static Http2Headers response(Metadata md) {
        if (md == null || md.isEmpty()) {
            return PLAIN_RESPONSE;
        }
        Http2Headers h = new DefaultHttp2Headers(false).status(OK).add(CONTENT_TYPE, GRPC);
        addMetadata(h, md);
        return h;
    }

    /** Trailers with {@code status} and {@code md}; for a trailers-only response also {@code :status} and content type. */
    static Http2Headers trailers(Status status, Metadata md, boolean trailersOnly) {
        int code = status.getCode().value();
        String description = status.getDescription();
        boolean described = description != null && !description.isEmpty();
        if (!described && (md == null || md.isEmpty()) && code < PLAIN_TRAILERS.length) {
            return trailersOnly ? PLAIN_TRAILERS_ONLY[code] : PLAIN_TRAILERS[code];
        }
        Http2Headers h = new DefaultHttp2Headers(false);
        if (trailersOnly) {
            h.status(OK).add(CONTENT_TYPE, GRPC);
        }
        h.add(GRPC_STATUS, code < STATUS_VALUES.length ? STATUS_VALUES[code] : AsciiString.of(Integer.toString(code)));
        if (described) {
            h.add(GRPC_MESSAGE, percentEncode(description));
        }
        addMetadata(h, md);
        return h;
    }

    /** An HTTP error answer as a trailers-only response: {@code :status} then the gRPC status. */
    static Http2Headers httpError(Refusal r) {
        Http2Headers h = new DefaultHttp2Headers(false).status(Integer.toString(r.httpStatus())).add(CONTENT_TYPE, GRPC);
        h.add(GRPC_STATUS, STATUS_VALUES[r.status().getCode().value()]);
        String description = r.status().getDescription();
        if (description != null && !description.isEmpty()) {
            h.add(GRPC_MESSAGE, percentEncode(description));
        }
        return h;
    }

    static void addMetadata(Http2Headers h, Metadata md) {
        int n = md == null ? 0 : md.size();
        for (int i = 0; i < n; i++) {
            h.add(RawMetadata.nameAt(md, i), value(md, i));
        }
    }

    /**
     * The header value of metadata entry {@code i}: an ASCII value's bytes as they are (core checked them; not copied),
     * a {@code -bin} value in base64 without padding.
     */
    static AsciiString value(Metadata md, int i) {
        byte[] raw = RawMetadata.rawValueAt(md, i);
        return RawMetadata.nameAt(md, i).endsWith(Metadata.BINARY_SUFFIX)
                ? new AsciiString(Base64.getEncoder().withoutPadding().encode(raw), false)
                : new AsciiString(raw, false);
    }

    /** Percent-encodes a status description as gRPC's grpc-message: UTF-8, every byte outside 0x20..0x7E and '%'. */
    static String percentEncode(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = null;
        for (int i = 0; i < utf8.length; i++) {
            int c = utf8[i] & 0xff;
            boolean plain = c >= 0x20 && c < 0x7f && c != '%';
            if (!plain && b == null) {
                b = new StringBuilder(utf8.length * 2);
                b.append(new String(utf8, 0, i, StandardCharsets.US_ASCII));
            }
            if (b != null) {
                if (plain) {
                    b.append((char) c);
                } else {
                    b.append('%').append((char) HEX[c >> 4]).append((char) HEX[c & 0xf]);
                }
            }
        }
        return b == null ? s : b.toString();
    }
}
