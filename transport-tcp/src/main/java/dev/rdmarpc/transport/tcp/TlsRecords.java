package dev.rdmarpc.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;

/** Tells a TLS record from plaintext at the start of a connection, and names what a plaintext peer sent. */
final class TlsRecords {
    /** The HELLO magic "RDRP" as it appears on the wire (little-endian 0x50524452) at offset 16 of the first frame. */
    private static final byte[] HELLO_MAGIC = {0x52, 0x44, 0x52, 0x50};
    private static final int HELLO_TYPE = 1;
    /** A fatal TLS alert record (TLS 1.2 framing), unexpected_message: what a TLS server says to a plaintext client. */
    private static final byte[] FATAL_UNEXPECTED_MESSAGE = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a};

    private TlsRecords() {
    }

    /**
     * Whether the first bytes read look like a TLS record (content type 20..23, version 3.x), and not like an
     * rdmarpc frame header; false when fewer than 3 bytes are there.
     */
    static boolean looksLikeTls(ByteBuf in) {
        int r = in.readerIndex();
        if (in.readableBytes() < 3) {
            return false;
        }
        int type = in.getUnsignedByte(r);
        return type >= 20 && type <= 23 && in.getUnsignedByte(r + 1) == 3 && in.getUnsignedByte(r + 2) <= 4 && !isHello(in);
    }

    /** Whether the bytes can only be plaintext: the first one is not a TLS content type or the second not version 3. */
    static boolean certainlyPlaintext(ByteBuf in) {
        int r = in.readerIndex();
        int n = in.readableBytes();
        if (n == 0) {
            return false;
        }
        int type = in.getUnsignedByte(r);
        if (type < 20 || type > 23) {
            return true;
        }
        return n >= 2 && in.getUnsignedByte(r + 1) != 3 || isHello(in);
    }

    /** An rdmarpc HELLO frame header (type HELLO, stream 0), confirmed by the magic when it has arrived. */
    private static boolean isHello(ByteBuf in) {
        int r = in.readerIndex();
        int n = in.readableBytes();
        if (n < 12 || in.getUnsignedByte(r + 4) != HELLO_TYPE || in.getInt(r + 8) != 0) {
            return false;
        }
        if (n < 20) {
            return true;
        }
        for (int i = 0; i < HELLO_MAGIC.length; i++) {
            if (in.getByte(r + 16 + i) != HELLO_MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /** What a plaintext peer's first bytes are, for a refusal reason. */
    static String describePlaintext(ByteBuf in, boolean fromClient) {
        if (isHello(in)) {
            return fromClient ? "an rdmarpc HELLO without TLS (the client is not configured for TLS)"
                    : "an rdmarpc HELLO without TLS (a plaintext rdmarpc server)";
        }
        if (Http2Refusal.looksLikePreface(in)) {
            return "the HTTP/2 preface without TLS (a plaintext gRPC/HTTP2 client)";
        }
        if (!fromClient && in.readableBytes() >= 9 && in.getUnsignedByte(in.readerIndex() + 3) == 0x4) {
            return "what looks like an HTTP/2 SETTINGS frame without TLS (a plaintext gRPC/HTTP2 server)";
        }
        String start = in.toString(in.readerIndex(), Math.min(8, in.readableBytes()), StandardCharsets.US_ASCII);
        if (start.startsWith("GET ") || start.startsWith("POST ") || start.startsWith("HEAD ") || start.startsWith("PUT ")
                || start.startsWith("HTTP/1.")) {
            return "plaintext HTTP/1";
        }
        return "bytes that are not a TLS record (0x" + ByteBufUtil.hexDump(in, in.readerIndex(), Math.min(16, in.readableBytes())) + "…)";
    }

    /** The alert a TLS server sends, unencrypted, before closing a plaintext client. */
    static byte[] fatalAlert() {
        return FATAL_UNEXPECTED_MESSAGE.clone();
    }
}
