package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.RawMetadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Encodes every control frame into a slab buffer (header and payload, ready to send) and decodes
 * their payloads. MESSAGE frames are written in place by the message framer instead.
 */
public final class Frames {
    /** Most metadata entries one HEADERS or TRAILERS frame may carry. */
    public static final int MAX_METADATA_ENTRIES = 1024;
    /** Longest status description sent; longer ones are cut. */
    public static final int MAX_DESCRIPTION = 16 * 1024;

    private Frames() {
    }

    private static SlabBuffer frame(SlabPool pool, int payloadLength, int type, int flags, int streamId) {
        SlabBuffer b = pool.allocate(FrameHeader.SIZE + payloadLength);
        FrameHeader.write(b.segment(), 0, payloadLength, type, flags, streamId, 0);
        b.setLength(FrameHeader.SIZE + payloadLength);
        return b;
    }

    /** Writes {@code bytes} with its u16 length in front at {@code pos}; returns the position after them. */
    private static long putBytes(MemorySegment seg, long pos, byte[] bytes) {
        seg.set(FrameHeader.SHORT, pos, (short) bytes.length);
        MemorySegment.copy(bytes, 0, seg, ValueLayout.JAVA_BYTE, pos + 2, bytes.length);
        return pos + 2 + bytes.length;
    }

    private static WireWriter payload(SlabBuffer b) {
        return new WireWriter(b.segment(), FrameHeader.SIZE);
    }

    // ---- HELLO ----

    public static SlabBuffer hello(SlabPool pool, Hello hello) {
        SlabBuffer b = frame(pool, hello.encodedSize(), FrameType.HELLO, 0, 0);
        hello.encode(payload(b));
        return b;
    }

    public static Hello decodeHello(MemorySegment payload) {
        return Hello.decode(new WireReader(payload, "HELLO"));
    }

    // ---- metadata block ----

    static long metadataSize(Metadata md) {
        if (md == null) {
            return 2;
        }
        long size = 2;
        for (int i = 0; i < md.size(); i++) {
            size += 2 + RawMetadata.nameAt(md, i).length() + 4 + RawMetadata.rawValueAt(md, i).length;
        }
        return size;
    }

    /**
     * Writes a metadata block at {@code pos} of {@code seg}. An empty block (the common case) is written in place; only
     * a block with entries goes through a {@link WireWriter}.
     */
    private static void writeMetadata(MemorySegment seg, long pos, Metadata md) {
        if (md == null || md.size() == 0) {
            seg.set(FrameHeader.SHORT, pos, (short) 0);
            return;
        }
        writeMetadata(new WireWriter(seg, pos), md);
    }

    static void writeMetadata(WireWriter w, Metadata md) {
        if (md == null) {
            w.u16(0);
            return;
        }
        if (md.size() > MAX_METADATA_ENTRIES) {
            throw new IllegalArgumentException("more than " + MAX_METADATA_ENTRIES + " metadata entries");
        }
        w.u16(md.size());
        for (int i = 0; i < md.size(); i++) {
            byte[] name = RawMetadata.nameAt(md, i).getBytes(StandardCharsets.US_ASCII);
            byte[] value = RawMetadata.rawValueAt(md, i);
            w.u16(name.length).bytes(name).i32(value.length).bytes(value);
        }
    }

    /** What each metadata entry counts on top of its key and value bytes, as HTTP/2 counts a header field (RFC 9113 §6.5.2). */
    public static final int METADATA_ENTRY_OVERHEAD = 32;
    /** No limit on decoded metadata bytes. */
    public static final int NO_METADATA_LIMIT = Integer.MAX_VALUE;

    /**
     * Metadata bytes as the limits count them: each entry's key and value bytes plus {@link #METADATA_ENTRY_OVERHEAD}
     * (0 for null or empty metadata).
     */
    public static long metadataBytes(Metadata md) {
        if (md == null) {
            return 0;
        }
        long size = 0;
        for (int i = 0; i < md.size(); i++) {
            size += METADATA_ENTRY_OVERHEAD + RawMetadata.nameAt(md, i).length() + RawMetadata.rawValueAt(md, i).length;
        }
        return size;
    }

    /**
     * Reads a metadata block, or null for one with no entries (no object is made for it), counting entries as
     * {@link #metadataBytes} does. Once the count passes {@code maxBytes} nothing more is copied, but the rest of the
     * block is still walked: a length that runs past the frame is malformed ({@link ProtocolException}, "truncated
     * ... payload") whether or not the block is also too large; a well-formed block over the limit throws
     * {@link MetadataTooLargeException}.
     */
    static Metadata readMetadataOrNull(WireReader r, int maxBytes, String frame) {
        int count = r.u16();
        if (count > MAX_METADATA_ENTRIES) {
            throw new ProtocolException("metadata has " + count + " entries, more than " + MAX_METADATA_ENTRIES);
        }
        if (count == 0) {
            return null;
        }
        Metadata md = new Metadata();
        long total = 0;
        for (int i = 0; i < count; i++) {
            int nameLength = r.u16();
            total += METADATA_ENTRY_OVERHEAD + nameLength;
            String name = total > maxBytes ? skip(r, nameLength) : r.ascii(nameLength);
            int len = r.i32();
            if (len < 0) {
                throw new ProtocolException("negative metadata value length");
            }
            total += len;
            if (total > maxBytes) {
                r.skip(len);
                continue;
            }
            try {
                RawMetadata.putRaw(md, name, r.bytes(len));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException("bad metadata: " + e.getMessage());
            }
        }
        if (total > maxBytes) {
            throw new MetadataTooLargeException(frame, maxBytes);
        }
        return md;
    }

    /** Steps over a metadata key not copied (its block is over the limit); null. */
    private static String skip(WireReader r, int n) {
        r.skip(n);
        return null;
    }

    // ---- HEADERS ----

    /** Client HEADERS: timeout (ns, 0 = none), path, authority, metadata. */
    public static SlabBuffer requestHeaders(SlabPool pool, int streamId, boolean endStream, String path,
                                            String authority, long timeoutNanos, Metadata md) {
        return requestHeaders(pool, streamId, endStream, path.getBytes(StandardCharsets.UTF_8),
                authority.getBytes(StandardCharsets.UTF_8), timeoutNanos, md);
    }

    /** Client HEADERS from the path and authority already encoded as UTF-8 (a channel encodes them once). */
    public static SlabBuffer requestHeaders(SlabPool pool, int streamId, boolean endStream, byte[] p, byte[] a,
                                            long timeoutNanos, Metadata md) {
        return requestHeaders(pool, streamId, endStream, p, a, timeoutNanos, md, FrameHeader.MAX_PAYLOAD_LIMIT);
    }

    /**
     * Client HEADERS within the peer's max frame payload.
     *
     * @throws FrameTooLargeException when the payload would exceed {@code maxPayload} (nothing is allocated)
     */
    public static SlabBuffer requestHeaders(SlabPool pool, int streamId, boolean endStream, byte[] p, byte[] a,
                                            long timeoutNanos, Metadata md, int maxPayload) {
        long wanted = 8L + 2 + p.length + 2 + a.length + metadataSize(md);
        if (wanted > maxPayload) {
            throw new FrameTooLargeException("request HEADERS", saturated(wanted), maxPayload);
        }
        int size = (int) wanted;
        SlabBuffer b = frame(pool, size, FrameType.HEADERS, endStream ? FrameFlags.END_STREAM : 0, streamId);
        MemorySegment seg = b.segment();
        long pos = FrameHeader.SIZE;
        seg.set(FrameHeader.LONG, pos, timeoutNanos);
        pos = putBytes(seg, pos + 8, p);
        pos = putBytes(seg, pos, a);
        writeMetadata(seg, pos, md);
        return b;
    }

    public static RequestHeaders decodeRequestHeaders(MemorySegment payload) {
        return decodeRequestHeaders(payload, null);
    }

    /**
     * Decodes client HEADERS, taking the path and authority strings from the connection's cache when they repeat
     * ({@code strings} may be null: decode them every time).
     */
    public static RequestHeaders decodeRequestHeaders(MemorySegment payload, Utf8Cache strings) {
        return decodeRequestHeaders(payload, 0, (int) payload.byteSize(), strings);
    }

    /** Decodes client HEADERS from {@code length} bytes of {@code memory} at {@code offset}. */
    public static RequestHeaders decodeRequestHeaders(MemorySegment memory, long offset, int length, Utf8Cache strings) {
        return decodeRequestHeaders(memory, offset, length, strings, NO_METADATA_LIMIT);
    }

    /**
     * Decodes client HEADERS whose metadata may count at most {@code maxMetadataBytes} ({@link #metadataBytes});
     * beyond that, throws {@link MetadataTooLargeException} without copying the rest (a length running past the frame
     * is a {@link ProtocolException} either way).
     */
    public static RequestHeaders decodeRequestHeaders(MemorySegment memory, long offset, int length, Utf8Cache strings,
                                                      int maxMetadataBytes) {
        return decodeRequestHeaders(new WireReader(), memory, offset, length, strings, maxMetadataBytes);
    }

    /** As {@link #decodeRequestHeaders(MemorySegment, long, int, Utf8Cache, int)}, reading through {@code r} (reset here). */
    public static RequestHeaders decodeRequestHeaders(WireReader r, MemorySegment memory, long offset, int length,
                                                      Utf8Cache strings, int maxMetadataBytes) {
        DecodedHeaders d = new DecodedHeaders();
        decodeRequestHeaders(r, d, memory, offset, length, strings, maxMetadataBytes);
        return new RequestHeaders(d.path, d.authority, d.timeoutNanos, d.metadata != null ? d.metadata : new Metadata());
    }

    /**
     * As {@link #decodeRequestHeaders(WireReader, MemorySegment, long, int, Utf8Cache, int)}, into {@code into}'s
     * path, authority, timeout and metadata (null when the frame carries none) instead of a new record.
     */
    public static void decodeRequestHeaders(WireReader r, DecodedHeaders into, MemorySegment memory, long offset,
                                            int length, Utf8Cache strings, int maxMetadataBytes) {
        into.clear();
        r.reset(memory, offset, length, "HEADERS");
        long timeout = r.i64();
        if (timeout < 0) {
            throw new ProtocolException("negative timeout in HEADERS");
        }
        String path = r.utf8(r.u16(), strings);
        String authority = r.utf8(r.u16(), strings);
        Metadata md = readMetadataOrNull(r, maxMetadataBytes, "HEADERS");
        r.end();
        into.path = path;
        into.authority = authority;
        into.timeoutNanos = timeout;
        into.metadata = md;
    }

    /** Server HEADERS: metadata only. */
    public static SlabBuffer responseHeaders(SlabPool pool, int streamId, Metadata md) {
        return responseHeaders(pool, streamId, md, FrameHeader.MAX_PAYLOAD_LIMIT);
    }

    /**
     * Server HEADERS within the peer's max frame payload.
     *
     * @throws FrameTooLargeException when the metadata would exceed {@code maxPayload} (nothing is allocated)
     */
    public static SlabBuffer responseHeaders(SlabPool pool, int streamId, Metadata md, int maxPayload) {
        long wanted = metadataSize(md);
        if (wanted > maxPayload) {
            throw new FrameTooLargeException("response HEADERS", saturated(wanted), maxPayload);
        }
        SlabBuffer b = frame(pool, (int) wanted, FrameType.HEADERS, 0, streamId);
        writeMetadata(b.segment(), FrameHeader.SIZE, md);
        return b;
    }

    public static Metadata decodeResponseHeaders(MemorySegment payload) {
        return decodeResponseHeaders(payload, 0, (int) payload.byteSize());
    }

    /** Decodes server HEADERS from {@code length} bytes of {@code memory} at {@code offset}. */
    public static Metadata decodeResponseHeaders(MemorySegment memory, long offset, int length) {
        return decodeResponseHeaders(memory, offset, length, NO_METADATA_LIMIT);
    }

    /** Decodes server HEADERS whose metadata may count at most {@code maxMetadataBytes}, else {@link MetadataTooLargeException}. */
    public static Metadata decodeResponseHeaders(MemorySegment memory, long offset, int length, int maxMetadataBytes) {
        return decodeResponseHeaders(new WireReader(), memory, offset, length, maxMetadataBytes);
    }

    /** As {@link #decodeResponseHeaders(MemorySegment, long, int, int)}, reading through {@code r} (reset here). */
    public static Metadata decodeResponseHeaders(WireReader r, MemorySegment memory, long offset, int length,
                                                 int maxMetadataBytes) {
        DecodedHeaders d = new DecodedHeaders();
        decodeResponseHeaders(r, d, memory, offset, length, maxMetadataBytes);
        return d.metadata != null ? d.metadata : new Metadata();
    }

    /** As {@link #decodeResponseHeaders(WireReader, MemorySegment, long, int, int)}, into {@code into}'s metadata (null when none). */
    public static void decodeResponseHeaders(WireReader r, DecodedHeaders into, MemorySegment memory, long offset, int length,
                                             int maxMetadataBytes) {
        into.clear();
        r.reset(memory, offset, length, "HEADERS");
        Metadata md = readMetadataOrNull(r, maxMetadataBytes, "HEADERS");
        r.end();
        into.metadata = md;
    }

    // ---- TRAILERS / CANCEL / GOAWAY ----

    private static final byte[] NO_DESCRIPTION = new byte[0];

    private static final byte[] ELLIPSIS = "\u2026".getBytes(StandardCharsets.UTF_8);

    /** The status description as UTF-8, cut to {@link #MAX_DESCRIPTION} bytes (see {@link #truncateUtf8}). */
    private static byte[] description(Status s) {
        String d = s.getDescription();
        if (d == null) {
            return NO_DESCRIPTION;
        }
        return truncateUtf8(d.getBytes(StandardCharsets.UTF_8), MAX_DESCRIPTION);
    }

    /**
     * {@code utf8} itself when it has at most {@code maxBytes} bytes; otherwise its longest prefix of whole characters
     * that leaves room for "…" (U+2026, 3 bytes), followed by "…". Never cuts inside a character; empty when even
     * the mark does not fit.
     */
    public static byte[] truncateUtf8(byte[] utf8, int maxBytes) {
        if (utf8.length <= maxBytes) {
            return utf8;
        }
        if (maxBytes < ELLIPSIS.length) {
            return NO_DESCRIPTION;
        }
        int cut = maxBytes - ELLIPSIS.length;
        while (cut > 0 && (utf8[cut] & 0xC0) == 0x80) {
            cut--; // utf8[cut] continues the character before it: cut before that character instead
        }
        byte[] out = java.util.Arrays.copyOf(utf8, cut + ELLIPSIS.length);
        System.arraycopy(ELLIPSIS, 0, out, cut, ELLIPSIS.length);
        return out;
    }

    private static int saturated(long size) {
        return (int) Math.min(size, Integer.MAX_VALUE);
    }

    private static Status readStatus(WireReader r) {
        int code = r.u8();
        int len = r.i32();
        if (len < 0 || len > MAX_DESCRIPTION) {
            throw new ProtocolException("status description length " + len + " outside [0, " + MAX_DESCRIPTION + "]");
        }
        Status s = Status.fromCodeValue(code);
        return len == 0 ? s : s.withDescription(r.utf8(len));
    }

    public static SlabBuffer trailers(SlabPool pool, int streamId, Status status, Metadata md) {
        return trailers(pool, streamId, status, md, FrameHeader.MAX_PAYLOAD_LIMIT);
    }

    /**
     * TRAILERS within the peer's max frame payload: a description that does not fit is cut (whole UTF-8 characters,
     * marked with "…", see {@link #truncateUtf8}).
     *
     * @throws FrameTooLargeException when the metadata alone (with an empty description) exceeds {@code maxPayload};
     *                                its size is that of the TRAILERS as asked, description included
     */
    public static SlabBuffer trailers(SlabPool pool, int streamId, Status status, Metadata md, int maxPayload) {
        long fixed = 1 + 4 + metadataSize(md);
        byte[] d = description(status);
        if (fixed > maxPayload) {
            throw new FrameTooLargeException("TRAILERS", saturated(fixed + d.length), maxPayload);
        }
        if (fixed + d.length > maxPayload) {
            d = truncateUtf8(d, (int) (maxPayload - fixed));
        }
        SlabBuffer b = frame(pool, (int) fixed + d.length, FrameType.TRAILERS, 0, streamId);
        MemorySegment seg = b.segment();
        seg.set(ValueLayout.JAVA_BYTE, FrameHeader.SIZE, (byte) status.getCode().value());
        seg.set(FrameHeader.INT, FrameHeader.SIZE + 1, d.length);
        MemorySegment.copy(d, 0, seg, ValueLayout.JAVA_BYTE, FrameHeader.SIZE + 5, d.length);
        writeMetadata(seg, FrameHeader.SIZE + 5 + d.length, md);
        return b;
    }

    public static Trailers decodeTrailers(MemorySegment payload) {
        return decodeTrailers(payload, 0, (int) payload.byteSize());
    }

    /** Decodes TRAILERS from {@code length} bytes of {@code memory} at {@code offset}. */
    public static Trailers decodeTrailers(MemorySegment memory, long offset, int length) {
        return decodeTrailers(memory, offset, length, NO_METADATA_LIMIT);
    }

    /**
     * Decodes TRAILERS whose metadata may count at most {@code maxMetadataBytes}; beyond that, throws
     * {@link MetadataTooLargeException} (which carries the status the trailers did carry).
     */
    public static Trailers decodeTrailers(MemorySegment memory, long offset, int length, int maxMetadataBytes) {
        return decodeTrailers(new WireReader(), memory, offset, length, maxMetadataBytes);
    }

    /** As {@link #decodeTrailers(MemorySegment, long, int, int)}, reading through {@code r} (reset here). */
    public static Trailers decodeTrailers(WireReader r, MemorySegment memory, long offset, int length, int maxMetadataBytes) {
        DecodedHeaders d = new DecodedHeaders();
        decodeTrailers(r, d, memory, offset, length, maxMetadataBytes);
        return new Trailers(d.status, d.metadata != null ? d.metadata : new Metadata());
    }

    /**
     * As {@link #decodeTrailers(WireReader, MemorySegment, long, int, int)}, into {@code into}'s status and metadata
     * (null when none) instead of a new record.
     */
    public static void decodeTrailers(WireReader r, DecodedHeaders into, MemorySegment memory, long offset, int length,
                                      int maxMetadataBytes) {
        into.clear();
        r.reset(memory, offset, length, "TRAILERS");
        Status s = readStatus(r);
        Metadata md;
        try {
            md = readMetadataOrNull(r, maxMetadataBytes, "TRAILERS");
        } catch (MetadataTooLargeException e) {
            throw e.withTrailersStatus(s);
        }
        r.end();
        into.status = s;
        into.metadata = md;
    }

    public static SlabBuffer cancel(SlabPool pool, int streamId, Status status) {
        byte[] d = description(status);
        SlabBuffer b = frame(pool, 1 + 4 + d.length, FrameType.CANCEL, 0, streamId);
        payload(b).u8(status.getCode().value()).i32(d.length).bytes(d);
        return b;
    }

    public static Status decodeCancel(MemorySegment payload) {
        WireReader r = new WireReader(payload, "CANCEL");
        Status s = readStatus(r);
        r.end();
        return s;
    }

    public static SlabBuffer goAway(SlabPool pool, int lastStreamId, Status status) {
        byte[] d = description(status);
        SlabBuffer b = frame(pool, 4 + 1 + 4 + d.length, FrameType.GOAWAY, 0, 0);
        payload(b).i32(lastStreamId).u8(status.getCode().value()).i32(d.length).bytes(d);
        return b;
    }

    /** GOAWAY payload: the last stream id the sender will serve, and why it is going away. */
    public record GoAway(int lastStreamId, Status status) {
    }

    public static GoAway decodeGoAway(MemorySegment payload) {
        WireReader r = new WireReader(payload, "GOAWAY");
        int last = r.i32();
        Status s = readStatus(r);
        r.end();
        return new GoAway(last, s);
    }

    // ---- END_STREAM / WINDOW / PING ----

    public static SlabBuffer endStream(SlabPool pool, int streamId) {
        return frame(pool, 0, FrameType.END_STREAM, 0, streamId);
    }

    /** WINDOW: grants the peer {@code increment} more bytes on the stream (credit field). */
    public static SlabBuffer window(SlabPool pool, int streamId, int increment) {
        SlabBuffer b = frame(pool, 0, FrameType.WINDOW, 0, streamId);
        FrameHeader.setCredit(b.segment(), 0, increment);
        return b;
    }

    /**
     * Connection WINDOW: grants the peer {@code increment} more bytes of the connection window, in a 4-byte payload on
     * stream 0 (an empty WINDOW on stream 0 is the RDMA transport's credit frame).
     */
    public static SlabBuffer connectionWindow(SlabPool pool, int increment) {
        SlabBuffer b = frame(pool, CONNECTION_WINDOW_SIZE, FrameType.WINDOW, 0, 0);
        payload(b).i32(increment);
        return b;
    }

    /**
     * A BLOCKED: a connection WINDOW whose increment is 0, sent by a side that keeps its peer's connection window when a
     * message waits for more of it than is left (PROTOCOL.md "Connection window").
     */
    public static SlabBuffer connectionBlocked(SlabPool pool) {
        return connectionWindow(pool, 0);
    }

    /** Payload size of a connection WINDOW. */
    public static final int CONNECTION_WINDOW_SIZE = 4;

    /** The increment of a connection WINDOW's payload; a payload of another size is a protocol error. */
    public static int decodeConnectionWindow(MemorySegment payload) {
        WireReader r = new WireReader(payload, "connection WINDOW");
        int v = r.i32();
        r.end();
        return v;
    }

    public static SlabBuffer ping(SlabPool pool, long data, boolean ack) {
        SlabBuffer b = frame(pool, 8, FrameType.PING, ack ? FrameFlags.ACK : 0, 0);
        payload(b).i64(data);
        return b;
    }

    public static long decodePing(MemorySegment payload) {
        WireReader r = new WireReader(payload, "PING");
        long v = r.i64();
        r.end();
        return v;
    }
}
