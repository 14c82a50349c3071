package dev.rdmarpc.grpc;

import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.Decompressor;
import io.grpc.Drainable;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.internal.StatsTraceContext;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Locale;

/**
 * grpc's per-message compression on rdmarpc's COMPRESSED flag: the encoding is agreed in metadata
 * ({@code grpc-encoding}, {@code grpc-accept-encoding}) by grpc itself, the streams compress with
 * the {@link Compressor} grpc gives them and decompress with the {@link Decompressor} it picks, with
 * grpc's checks and wording.
 */
final class Compression {
    private Compression() {
    }

    /** Whether a stream with this compressor and message-compression setting compresses its messages. */
    static boolean compresses(Compressor compressor, boolean messageCompression) {
        return messageCompression && compressor != null && compressor != Codec.Identity.NONE;
    }

    /** The message compressed, marked so that it travels with the COMPRESSED flag. */
    static StreamMarshaller.Compressed compress(Compressor compressor, InputStream message) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(32, Math.min(message.available() / 2, 1 << 20)));
        try (OutputStream compressing = compressor.compress(out)) {
            if (message instanceof Drainable d) {
                d.drainTo(compressing);
            } else {
                message.transferTo(compressing);
            }
        }
        return new StreamMarshaller.Compressed(out.toByteArray());
    }

    /**
     * A message that arrived compressed, as grpc's deframer takes it: counts it on the stream's tracers and returns it
     * decompressed, read lazily; reading past {@code maxSize} decompressed bytes fails with RESOURCE_EXHAUSTED (in
     * the reader, i.e. grpc's message parsing), and the decompressed size is reported as it is read.
     *
     * @param decompressor the call's decompressor, null when the call negotiated none
     * @throws StatusException INTERNAL, as grpc's deframer, without a decompressor or when decompression cannot start
     */
    static InputStream received(Decompressor decompressor, InputStream compressed, int seq, int size, int maxSize,
                                StatsTraceContext stats) throws StatusException {
        if (decompressor == null) {
            throw Status.INTERNAL.withDescription("Can't decode compressed gRPC message as compression not configured")
                    .asException();
        }
        stats.inboundMessage(seq);
        stats.inboundWireSize(size);
        stats.inboundMessageRead(seq, size, -1);
        try {
            return new SizeEnforcing(decompressor.decompress(compressed), maxSize, stats);
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot decompress a " + decompressor.getMessageEncoding() + " message")
                    .withCause(e).asException();
        }
    }

    /** As grpc's {@code MessageDeframer.SizeEnforcingInputStream}. */
    private static final class SizeEnforcing extends FilterInputStream {
        private final int maxSize;
        private final StatsTraceContext stats;
        private long count;
        private long maxCount;

        SizeEnforcing(InputStream in, int maxSize, StatsTraceContext stats) {
            super(in);
            this.maxSize = maxSize;
            this.stats = stats;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b != -1) {
                count++;
            }
            verify();
            report();
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n != -1) {
                count += n;
            }
            verify();
            report();
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(n);
            count += skipped;
            verify();
            report();
            return skipped;
        }

        @Override
        public boolean markSupported() {
            return false;
        }

        @Override
        public synchronized void mark(int readlimit) {
        }

        @Override
        public synchronized void reset() throws IOException {
            throw new IOException("Mark not supported");
        }

        private void report() {
            if (count > maxCount) {
                stats.inboundUncompressedSize(count - maxCount);
                maxCount = count;
            }
        }

        private void verify() {
            if (maxSize >= 0 && count > maxSize) {
                throw Status.RESOURCE_EXHAUSTED.withDescription(String.format(Locale.US,
                        "Decompressed gRPC message exceeds maximum size %d", maxSize)).asRuntimeException();
            }
        }
    }
}
