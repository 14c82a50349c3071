package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RawMetadata;
import dev.rdmarpc.core.Status;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.ReadOnlyHttp2Headers;
import io.netty.util.AsciiString;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * gRPC's HTTP/2 header rules for a client (gRPC's PROTOCOL-HTTP2): the request headers with {@code grpc-timeout} and
 * {@code te: trailers}, and the server's answer read back as a status and metadata, an HTTP status without
 * {@code grpc-status} mapped as gRPC's "HTTP to gRPC status code mapping" says, RST_STREAM codes as grpc-java maps them.
 */
final class GrpcClientHeaders {
    private static final AsciiString POST = AsciiString.cached("POST");
    private static final AsciiString HTTP = AsciiString.cached("http");
    private static final AsciiString HTTPS = AsciiString.cached("https");
    private static final AsciiString TE = AsciiString.cached("te");
    private static final AsciiString TRAILERS = AsciiString.cached("trailers");
    /** The largest value {@code grpc-timeout} carries: 8 digits. */
    private static final long MAX_TIMEOUT_VALUE = 99_999_999L;

    private GrpcClientHeaders() {
    }

    /** Request headers for a call to {@code path} ("pkg.Service/Method") with the call's timeout (0: none) and metadata. */
    static Http2Headers request(String path, String authority, boolean tls, long timeoutNanos, Metadata md) {
        return request(requestPath(path), new AsciiString(authority), tls, timeoutNanos, md);
    }

    /** The {@code :path} of a call to {@code path} ("pkg.Service/Method"). */
    static AsciiString requestPath(String path) {
        return new AsciiString("/" + path);
    }

    /**
     * Request headers with {@code :path} and {@code :authority} made already: a read-only list (the codec only reads what
     * it writes), the metadata's values as core holds them ({@link GrpcHeaders#value}).
     */
    static Http2Headers request(AsciiString path, AsciiString authority, boolean tls, long timeoutNanos, Metadata md) {
        AsciiString scheme = tls ? HTTPS : HTTP;
        int entries = md == null ? 0 : md.size();
        AsciiString[] other = new AsciiString[4 + (timeoutNanos > 0 ? 2 : 0) + 2 * entries];
        int n = 0;
        other[n++] = GrpcHeaders.CONTENT_TYPE;
        other[n++] = GrpcHeaders.GRPC;
        other[n++] = TE;
        other[n++] = TRAILERS;
        if (timeoutNanos > 0) {
            other[n++] = GrpcHeaders.GRPC_TIMEOUT;
            other[n++] = new AsciiString(timeout(timeoutNanos));
        }
        for (int i = 0; i < entries; i++) {
            other[n++] = new AsciiString(RawMetadata.nameAt(md, i));
            other[n++] = GrpcHeaders.value(md, i);
        }
        return ReadOnlyHttp2Headers.clientHeaders(false, POST, path, scheme, authority, other);
    }

    /** A timeout as {@code grpc-timeout} writes it: at most 8 digits and the finest unit that holds it. */
    static String timeout(long nanos) {
        long[] perUnit = {1L, 1_000L, 1_000_000L, 1_000_000_000L, 60_000_000_000L, 3_600_000_000_000L};
        char[] units = {'n', 'u', 'm', 'S', 'M', 'H'};
        for (int i = 0; i < units.length; i++) {
            long value = nanos / perUnit[i];
            if (value <= MAX_TIMEOUT_VALUE) {
                // round up so that the server never sees a later deadline than the call's
                return (nanos % perUnit[i] == 0 ? value : value + 1) + String.valueOf(units[i]);
            }
        }
        return MAX_TIMEOUT_VALUE + "H";
    }

    /**
     * Why the first headers of a response end the call at once, or null when they are a gRPC answer: an HTTP status
     * other than 200 or a content type other than gRPC's, without a {@code grpc-status} that says otherwise.
     */
    static Status refusal(Http2Headers h) {
        if (h.contains(GrpcHeaders.GRPC_STATUS)) {
            return null;
        }
        CharSequence status = h.status();
        int http = parseHttpStatus(status);
        if (http != 200) {
            return httpStatus(http).withDescription("HTTP status code " + status + " (the server answered with no grpc-status)");
        }
        CharSequence type = h.get(GrpcHeaders.CONTENT_TYPE);
        if (!GrpcHeaders.isGrpcContentType(type)) {
            return Status.UNKNOWN.withDescription("invalid content-type: " + type + " (the server is not a gRPC server)");
        }
        return null;
    }

    private static int parseHttpStatus(CharSequence status) {
        if (status == null) {
            return -1;
        }
        try {
            return Integer.parseInt(status.toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** gRPC's mapping of an HTTP status that came without {@code grpc-status}. */
    static Status httpStatus(int http) {
        return switch (http) {
            case 400 -> Status.INTERNAL;
            case 401 -> Status.UNAUTHENTICATED;
            case 403 -> Status.PERMISSION_DENIED;
            case 404 -> Status.UNIMPLEMENTED;
            case 429, 502, 503, 504 -> Status.UNAVAILABLE;
            default -> Status.UNKNOWN;
        };
    }

    /** The status of trailers (or of a trailers-only response): {@code grpc-status} and the percent-decoded {@code grpc-message}. */
    static Status status(Http2Headers h) {
        CharSequence code = h.get(GrpcHeaders.GRPC_STATUS);
        if (code == null) {
            Status refusal = refusal(h);
            return refusal != null ? refusal : Status.UNKNOWN.withDescription("the server's trailers have no grpc-status");
        }
        int value;
        try {
            value = Integer.parseInt(code.toString());
        } catch (NumberFormatException e) {
            return Status.UNKNOWN.withDescription("malformed grpc-status: " + code);
        }
        Status s = Status.fromCodeValue(value);
        CharSequence message = h.get(GrpcHeaders.GRPC_MESSAGE);
        return message == null ? s : s.withDescription(percentDecode(message.toString()));
    }

    /**
     * The metadata of response headers or trailers: every header but the pseudo-headers, the content type and the
     * status, {@code -bin} values decoded from base64.
     *
     * @throws IllegalArgumentException when a name or value is not valid metadata
     */
    static Metadata metadata(Http2Headers h) {
        return GrpcHeaders.metadata(h, GrpcHeaders.NOT_ANSWER_METADATA);
    }

    /** The status a client reports for a stream the server reset with {@code code}, as grpc-java reports it. */
    static Status reset(long code) {
        Http2Error e = Http2Error.valueOf(code);
        Status s = e == null ? Status.INTERNAL : switch (e) {
            case CANCEL -> Status.CANCELLED;
            case REFUSED_STREAM -> Status.UNAVAILABLE;
            case ENHANCE_YOUR_CALM -> Status.RESOURCE_EXHAUSTED;
            case INADEQUATE_SECURITY -> Status.PERMISSION_DENIED;
            default -> Status.INTERNAL;
        };
        return s.withDescription("the server reset the stream (HTTP/2 error code " + code + (e == null ? "" : " " + e) + ")");
    }

    /** Decodes gRPC's percent-encoded {@code grpc-message}; a malformed escape is kept as it is. */
    static String percentDecode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        byte[] in = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < in.length; i++) {
            if (in[i] == '%' && i + 2 < in.length) {
                int hi = Character.digit(in[i + 1], 16);
                int lo = Character.digit(in[i + 2], 16);
                if (hi >= 0 && lo >= 0) {
                    out.write(hi << 4 | lo);
                    i += 2;
                    continue;
                }
            }
            out.write(in[i]);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
