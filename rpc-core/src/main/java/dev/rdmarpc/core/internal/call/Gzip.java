package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * gzip per message, negotiated per call as gRPC does: {@code grpc-encoding} names the encoding of a side's messages,
 * {@code grpc-accept-encoding} the encodings a side takes. A message is compressed only when the call asked for it,
 * travels with the COMPRESSED flag, and is inflated before its marshaller parses it (when the marshaller
 * {@link Marshaller#parsesDecompressed parses plain bytes only}) into at most the size limit: a message that inflates
 * past it is refused with RESOURCE_EXHAUSTED without being inflated further.
 */
public final class Gzip {
    static final String NAME = "gzip";
    static final Metadata.Key<String> ENCODING = Metadata.Key.ascii("grpc-encoding");
    static final Metadata.Key<String> ACCEPT_ENCODING = Metadata.Key.ascii("grpc-accept-encoding");

    /** Frames gzip's bytes as they are, marked compressed. */
    private static final Marshaller<byte[]> COMPRESSED_BYTES = new Marshaller<>() {
        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target) {
            MemorySegment.copy(value, 0, target, ValueLayout.JAVA_BYTE, 0, value.length);
        }

        @Override
        public boolean isCompressed(byte[] value) {
            return true;
        }

        @Override
        public byte[] parse(MemorySegment source) {
            throw new UnsupportedOperationException("send side only");
        }
    };

    private Gzip() {
    }

    /** Whether {@code compressor} asks for gzip (null or "identity": no); refuses encodings core does not have. */
    static boolean requested(String compressor) {
        if (compressor == null || compressor.equals("identity")) {
            return false;
        }
        if (!compressor.equals(NAME)) {
            throw new IllegalArgumentException("unknown compressor " + compressor + " (rdmarpc has gzip)");
        }
        return true;
    }

    /**
     * The refusal of a request whose {@code grpc-encoding} core cannot decode, for a method whose marshaller core
     * decodes for ({@link Marshaller#parsesDecompressed}), or null: UNIMPLEMENTED, as gRPC answers an encoding the
     * server does not support (send it with {@link #acceptedEncodings()}). Other marshallers decode (or refuse) the
     * encodings they agree on themselves.
     */
    public static Status unsupportedEncoding(Marshaller<?> requestMarshaller, Metadata headers) {
        if (headers == null || !requestMarshaller.parsesDecompressed()) {
            return null;
        }
        String encoding = headers.get(ENCODING);
        if (encoding == null || encoding.equalsIgnoreCase(NAME) || encoding.equalsIgnoreCase("identity")) {
            return null;
        }
        return Status.UNIMPLEMENTED.withDescription("Can't find decompressor for " + encoding + " (this server decodes "
                + NAME + ")");
    }

    /** Trailers naming the encodings a server decodes ({@code grpc-accept-encoding: gzip}), for a refusal. */
    public static Metadata acceptedEncodings() {
        Metadata md = new Metadata();
        md.put(ACCEPT_ENCODING, NAME);
        return md;
    }

    /** {@code headers} (null for none, or the caller's own, which are not changed) with {@code grpc-encoding: gzip}. */
    static Metadata encodingNamed(Metadata headers) {
        Metadata md = new Metadata();
        if (headers != null) {
            md.merge(headers);
        }
        md.put(ENCODING, NAME);
        return md;
    }

    /** Whether {@code headers} (null for none) name gzip among the encodings in {@code key}'s values. */
    static boolean named(Metadata headers, Metadata.Key<String> key) {
        if (headers == null) {
            return false;
        }
        for (String value : headers.getAll(key)) {
            for (String encoding : value.split(",")) {
                if (encoding.strip().equalsIgnoreCase(NAME)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** {@code message} serialized, gzipped and framed with the COMPRESSED flag. */
    static <T> SlabBuffer frame(SlabPool pool, Marshaller<T> marshaller, T message) {
        byte[] plain = new byte[marshaller.serializedSize(message)];
        marshaller.write(message, MemorySegment.ofArray(plain));
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, plain.length / 4));
        try (GZIPOutputStream gzip = new GZIPOutputStream(out)) {
            gzip.write(plain);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not from memory streams
        }
        return MessageFramer.frame(pool, COMPRESSED_BYTES, out.toByteArray());
    }

    /**
     * Parses a received message: a compressed one the call negotiated gzip for is inflated first, when its marshaller
     * parses plain bytes only; anything else goes to the marshaller as it came. Takes ownership of {@code message}.
     */
    static <T> T parseOwned(Marshaller<T> marshaller, SlabBuffer message, boolean compressed, boolean gzipNegotiated,
                            int maxSize) {
        if (!compressed || !marshaller.parsesDecompressed()) {
            return marshaller.parseOwned(message, compressed);
        }
        if (!gzipNegotiated) {
            message.release();
            throw Status.INTERNAL.withDescription("received a compressed message on a call whose grpc-encoding names"
                    + " no encoding").asException();
        }
        byte[] plain;
        try {
            plain = inflate(message.segment().asSlice(0, message.length()), maxSize);
        } finally {
            message.release();
        }
        return marshaller.parse(MemorySegment.ofArray(plain), 0, plain.length, false);
    }

    /** The gzip bytes in {@code compressed} inflated; RESOURCE_EXHAUSTED as soon as they pass {@code maxSize}. */
    static byte[] inflate(MemorySegment compressed, int maxSize) {
        try (InputStream in = new GZIPInputStream(new SegmentInput(compressed), 8192)) {
            byte[] out = new byte[(int) Math.min(maxSize + 1L, Math.max(256, compressed.byteSize() * 4))];
            int n = 0;
            while (true) {
                if (n == out.length) {
                    if (n > maxSize) {
                        throw Status.RESOURCE_EXHAUSTED.withDescription("a gzip-compressed message inflates past the maximum "
                                + "message size " + maxSize + " (not inflated further)").asException();
                    }
                    out = Arrays.copyOf(out, (int) Math.min(maxSize + 1L, 2L * n));
                }
                int read = in.read(out, n, out.length - n);
                if (read < 0) {
                    return n == out.length ? out : Arrays.copyOf(out, n);
                }
                n += read;
            }
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot inflate a gzip-compressed message: " + e.getMessage())
                    .withCause(e).asException();
        }
    }

    /** Reads a memory segment. */
    private static final class SegmentInput extends InputStream {
        private final MemorySegment segment;
        private long position;

        SegmentInput(MemorySegment segment) {
            this.segment = segment;
        }

        @Override
        public int read() {
            return position < segment.byteSize() ? segment.get(ValueLayout.JAVA_BYTE, position++) & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            long left = segment.byteSize() - position;
            if (left <= 0) {
                return len == 0 ? 0 : -1;
            }
            int n = (int) Math.min(len, left);
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, position, b, off, n);
            position += n;
            return n;
        }

        @Override
        public int available() {
            return (int) Math.min(Integer.MAX_VALUE, segment.byteSize() - position);
        }
    }
}
