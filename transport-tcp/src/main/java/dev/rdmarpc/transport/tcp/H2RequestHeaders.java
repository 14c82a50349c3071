package dev.rdmarpc.transport.tcp;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * An HTTP/2 request's headers written as the request HEADERS frame core decodes (PROTOCOL.md "HEADERS"): the path
 * without its leading '/', the authority, the deadline and the call metadata, straight from the decoded header list
 * into one buffer. Metadata is checked here as core's {@link Metadata} checks it (names of {@code [a-z0-9-_.]},
 * printable ASCII values, base64 {@code -bin} values), so that a bad header refuses its one stream instead of reaching
 * core as a protocol error.
 */
final class H2RequestHeaders {
    /** The timeout, the two lengths and the entry count: the payload's fixed part. */
    private static final int FIXED = 8 + 2 + 2 + 2;

    private H2RequestHeaders() {
    }

    /**
     * Writes into {@code b} (empty: the frame starts at index 0) the HEADERS frame of core stream {@code streamId} for
     * request headers {@code h} (already checked by {@link GrpcHeaders#check}) with a deadline of {@code timeoutNanos}
     * (0 for none).
     *
     * @throws IllegalArgumentException when a header is not valid metadata ({@code b} then holds part of a frame)
     */
    static void write(ByteBuf b, int streamId, boolean endStream, Http2Headers h, long timeoutNanos) {
        CharSequence path = h.path();
        CharSequence authority = h.authority();
        b.writerIndex(FrameHeader.SIZE);
        b.writeLongLE(timeoutNanos);
        writeString(b, path, 1);
        writeString(b, authority == null ? "" : authority, 0);
        int countAt = b.writerIndex();
        b.writeShortLE(0);
        int count = 0;
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            CharSequence name = e.getKey();
            if (!GrpcHeaders.isMetadata(name)) {
                continue;
            }
            count += writeEntries(b, name, e.getValue());
            if (count > Frames.MAX_METADATA_ENTRIES) {
                throw new IllegalArgumentException("more than " + Frames.MAX_METADATA_ENTRIES + " metadata entries");
            }
        }
        b.setShortLE(countAt, count);
        int payload = b.writerIndex() - FrameHeader.SIZE;
        b.setIntLE(0, payload);
        b.setByte(4, FrameType.HEADERS);
        b.setByte(5, endStream ? FrameFlags.END_STREAM : 0);
        b.setShortLE(6, 0);
        b.setIntLE(8, streamId);
        b.setIntLE(12, 0);
    }

    /** Writes {@code s} from index {@code from} as UTF-8 with its u16 length in front. */
    private static void writeString(ByteBuf b, CharSequence s, int from) {
        int n = s.length() - from;
        if (!isAscii(s, from)) {
            byte[] utf8 = s.subSequence(from, s.length()).toString().getBytes(StandardCharsets.UTF_8);
            checkU16(utf8.length, "path or authority");
            b.writeShortLE(utf8.length).writeBytes(utf8);
            return;
        }
        checkU16(n, "path or authority");
        b.writeShortLE(n);
        if (s instanceof AsciiString a) {
            b.writeBytes(a.array(), a.arrayOffset() + from, n); // what HPACK decoding gives: the bytes as they came
            return;
        }
        for (int i = from; i < s.length(); i++) {
            b.writeByte(s.charAt(i));
        }
    }

    /** Writes the metadata entries of header {@code name}: one, or one per comma-separated part of a {@code -bin} value. */
    private static int writeEntries(ByteBuf b, CharSequence name, CharSequence value) {
        int nameLength = name.length();
        checkU16(nameLength, "metadata name");
        boolean binary = endsWithBin(name);
        if (!binary) {
            writeName(b, name);
            b.writeIntLE(value.length());
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c < 0x20 || c > 0x7e) {
                    throw new IllegalArgumentException("metadata value of ASCII key " + name + " is not printable ASCII");
                }
                b.writeByte(c);
            }
            return 1;
        }
        int entries = 0;
        for (String part : value.toString().split(",", -1)) {
            byte[] bytes = Base64.getDecoder().decode(part.trim());
            writeName(b, name);
            b.writeIntLE(bytes.length).writeBytes(bytes);
            entries++;
        }
        return entries;
    }

    /** Writes a metadata name, lower-cased, with its u16 length; refuses characters metadata names may not have. */
    private static void writeName(ByteBuf b, CharSequence name) {
        b.writeShortLE(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                c = (char) (c + ('a' - 'A'));
            }
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
            if (!ok) {
                throw new IllegalArgumentException("invalid character '" + c + "' in metadata key: " + name);
            }
            b.writeByte(c);
        }
    }

    private static boolean endsWithBin(CharSequence name) {
        int n = name.length();
        String suffix = Metadata.BINARY_SUFFIX;
        if (n < suffix.length()) {
            return false;
        }
        for (int i = 0; i < suffix.length(); i++) {
            if (Character.toLowerCase(name.charAt(n - suffix.length() + i)) != suffix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isAscii(CharSequence s, int from) {
        for (int i = from; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    private static void checkU16(int length, String what) {
        if (length > 0xffff) {
            throw new IllegalArgumentException(what + " of " + length + " bytes is longer than 65535");
        }
    }
}
