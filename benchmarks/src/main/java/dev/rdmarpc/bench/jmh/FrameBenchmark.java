package dev.rdmarpc.bench.jmh;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Trailers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * Encoding and decoding the wire protocol's frames: the bare 16-byte header (write, validate,
 * read back) and whole control frames a unary call sends (request HEADERS, TRAILERS, WINDOW),
 * each encoded into a pooled slab buffer and decoded from it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xms1g", "-Xmx1g"})
public class FrameBenchmark {
    private static final String PATH = "rdmarpc.bench.BenchService/Unary";
    private static final String AUTHORITY = "127.0.0.1:50051";

    private final SlabPool pool = new SlabPool(64L << 20, false);
    private SlabBuffer header;
    private SlabBuffer headers;
    private SlabBuffer trailers;
    private int streamId = 1;

    @Setup(Level.Trial)
    public void setUp() {
        header = pool.allocate(FrameHeader.SIZE);
        headers = Frames.requestHeaders(pool, 1, false, PATH, AUTHORITY, 5_000_000_000L, null);
        trailers = Frames.trailers(pool, 1, Status.OK, null);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        header.release();
        headers.release();
        trailers.release();
    }

    /** Writes a MESSAGE header, validates it as a receiver does, reads its fields back. */
    @Benchmark
    public int headerEncodeValidateDecode() {
        MemorySegment seg = header.segment();
        streamId = (streamId + 2) & 0x3fff_ffff | 1;
        FrameHeader.write(seg, 0, 64, FrameType.MESSAGE, 0x03, streamId, 0);
        FrameHeader.validate(seg, 0, FrameHeader.DEFAULT_MAX_PAYLOAD, false);
        return FrameHeader.payloadLength(seg, 0) + FrameHeader.type(seg, 0) + FrameHeader.flags(seg, 0)
                + FrameHeader.streamId(seg, 0) + FrameHeader.credit(seg, 0);
    }

    /** A client's request HEADERS frame (path, authority, timeout, no metadata) into a slab, then released. */
    @Benchmark
    public int requestHeadersEncode() {
        SlabBuffer b = Frames.requestHeaders(pool, 1, false, PATH, AUTHORITY, 5_000_000_000L, null);
        int len = b.length();
        b.release();
        return len;
    }

    /** Decoding a request HEADERS payload (as the server does for every call). */
    @Benchmark
    public Object requestHeadersDecode() {
        return Frames.decodeRequestHeaders(headers.segment().asSlice(FrameHeader.SIZE, headers.length() - FrameHeader.SIZE));
    }

    /** TRAILERS(OK, no metadata) into a slab, then released. */
    @Benchmark
    public int trailersEncode() {
        SlabBuffer b = Frames.trailers(pool, 1, Status.OK, null);
        int len = b.length();
        b.release();
        return len;
    }

    /** Decoding TRAILERS(OK) (as the client does for every call). */
    @Benchmark
    public Trailers trailersDecode() {
        return Frames.decodeTrailers(trailers.segment().asSlice(FrameHeader.SIZE, trailers.length() - FrameHeader.SIZE));
    }

    /** A WINDOW frame into a slab, then released. */
    @Benchmark
    public int windowEncode() {
        SlabBuffer b = Frames.window(pool, 1, 65536);
        int len = b.length();
        b.release();
        return len;
    }
}
