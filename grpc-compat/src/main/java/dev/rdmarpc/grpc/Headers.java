package dev.rdmarpc.grpc;

import dev.rdmarpc.core.RawMetadata;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.internal.GrpcUtil;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;

/**
 * Converts metadata between grpc and rdmarpc. Values of {@code -bin} keys stay raw bytes both ways
 * (grpc's internal serialized form is raw; only HTTP/2 base64-encodes them). Headers that grpc
 * keeps in metadata but that rdmarpc's protocol carries itself, or that belong to HTTP rather than
 * grpc (full-stream {@code content-encoding}), are left out. grpc's per-message encoding headers
 * ({@code grpc-encoding}, {@code grpc-accept-encoding}) travel: grpc negotiates with them.
 */
final class Headers {
    /** No exclusions. */
    static final Set<String> NONE = Set.of();

    /**
     * Request headers not sent: the deadline travels in HEADERS; rdmarpc has no full-stream
     * (content-encoding) compression; user-agent is sent separately.
     */
    static final Set<String> REQUEST_EXCLUDED = Set.of(
            GrpcUtil.TIMEOUT, GrpcUtil.CONTENT_ENCODING, GrpcUtil.CONTENT_ACCEPT_ENCODING,
            "content-type", "te", "user-agent");

    /** Response headers and trailers not sent (status travels in TRAILERS; no full-stream compression). */
    static final Set<String> RESPONSE_EXCLUDED = Set.of(
            GrpcUtil.CONTENT_ENCODING, GrpcUtil.CONTENT_ACCEPT_ENCODING,
            "content-type", "grpc-status", "grpc-message");

    /** Received request headers that must not reach grpc's server: the deadline is re-added from HEADERS. */
    static final Set<String> RECEIVED_REQUEST_EXCLUDED = Set.of(
            GrpcUtil.TIMEOUT, GrpcUtil.CONTENT_ENCODING, GrpcUtil.CONTENT_ACCEPT_ENCODING);

    /**
     * Names nearly every call carries (grpc's own headers): converted without a new string or array each time. Their
     * byte forms are shared with grpc's metadata, which never changes a name's bytes.
     */
    private static final String[] COMMON_NAMES = {
        "grpc-accept-encoding", "grpc-encoding", "user-agent", "content-type", "te", GrpcUtil.TIMEOUT,
        "grpc-status", "grpc-message", "content-encoding", "content-accept-encoding", "authorization",
        "grpc-previous-rpc-attempts", "grpc-retry-pushback-ms",
    };
    private static final byte[][] COMMON_NAME_BYTES = new byte[COMMON_NAMES.length][];

    static {
        for (int i = 0; i < COMMON_NAMES.length; i++) {
            COMMON_NAME_BYTES[i] = COMMON_NAMES[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    private Headers() {
    }

    /** A name as grpc serializes it (lower-case ASCII bytes), as a string. */
    private static String name(byte[] raw) {
        for (int i = 0; i < COMMON_NAME_BYTES.length; i++) {
            if (Arrays.equals(COMMON_NAME_BYTES[i], raw)) {
                return COMMON_NAMES[i];
            }
        }
        return new String(raw, StandardCharsets.US_ASCII);
    }

    /** A name's bytes for grpc (not to be modified: a common name's are shared). */
    private static byte[] nameBytes(String name) {
        for (int i = 0; i < COMMON_NAMES.length; i++) {
            if (COMMON_NAMES[i].equals(name)) {
                return COMMON_NAME_BYTES[i];
            }
        }
        return name.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * grpc metadata as rdmarpc metadata, without the excluded keys.
     *
     * @throws IllegalArgumentException if a key or an ASCII value is not allowed by the protocol
     */
    static dev.rdmarpc.core.Metadata toCore(Metadata grpc, Set<String> excluded) {
        dev.rdmarpc.core.Metadata out = new dev.rdmarpc.core.Metadata();
        if (grpc == null || InternalMetadata.headerCount(grpc) == 0) {
            return out;
        }
        byte[][] kv = InternalMetadata.serialize(grpc);
        for (int i = 0; i + 1 < kv.length; i += 2) {
            if (kv[i] == null) {
                break;
            }
            String name = name(kv[i]);
            if (!excluded.contains(name)) {
                RawMetadata.putRaw(out, name, kv[i + 1]);
            }
        }
        return out;
    }

    /** As {@link #toCore}, but null when grpc's metadata has no entries (core then sends none). */
    static dev.rdmarpc.core.Metadata toCoreOrNull(Metadata grpc, Set<String> excluded) {
        return grpc == null || InternalMetadata.headerCount(grpc) == 0 ? null : toCore(grpc, excluded);
    }

    /** rdmarpc metadata as grpc metadata, without the excluded keys. */
    static Metadata toGrpc(dev.rdmarpc.core.Metadata md, Set<String> excluded) {
        int n = md == null ? 0 : md.size();
        if (n == 0) {
            return new Metadata();
        }
        byte[][] kv = new byte[n * 2][];
        int used = 0;
        for (int i = 0; i < n; i++) {
            String name = RawMetadata.nameAt(md, i);
            if (excluded.contains(name)) {
                continue;
            }
            kv[used * 2] = nameBytes(name);
            kv[used * 2 + 1] = RawMetadata.rawValueAt(md, i);
            used++;
        }
        return InternalMetadata.newMetadata(used, kv);
    }

    /** Size of metadata as grpc counts it against {@code maxInboundMetadataSize} (RFC 7540 §6.5.2). */
    static long size(dev.rdmarpc.core.Metadata md) {
        long size = 0;
        for (int i = 0; i < md.size(); i++) {
            size += 32 + RawMetadata.nameAt(md, i).length() + RawMetadata.rawValueAt(md, i).length;
        }
        return size;
    }
}
