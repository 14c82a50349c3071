package dev.rdmarpc.bench.jmh;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.rdmarpc.bench.driver.Payloads;
import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import dev.rdmarpc.core.protocol.FrameHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * Serializing a protobuf message into a slab (as rdmarpc's message framer does: a block from the
 * pool, the length prefix, {@link ProtoMarshaller#write} into the slice) against
 * {@code toByteArray()}; and parsing it back from the slab against parsing a {@code byte[]}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xms1g", "-Xmx1g"})
public class MarshalBenchmark {
    private static final int PREFIX = FrameHeader.SIZE + 4;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Payload bytes of the message. */
    @Param({"64", "4096", "65536"})
    public int payload;

    private final SlabPool pool = new SlabPool(64L << 20, false);
    private final ProtoMarshaller<BenchRequest> marshaller = ProtoMarshaller.of(BenchRequest.getDefaultInstance());
    private BenchRequest message;
    private byte[] bytes;
    private SlabBuffer serialized;
    private MemorySegment serializedMessage;

    @Setup(Level.Trial)
    public void setUp() {
        message = BenchRequest.newBuilder().setPayload(Payloads.of(payload)).build();
        bytes = message.toByteArray();
        serialized = frame();
        serializedMessage = serialized.segment().asSlice(PREFIX, bytes.length);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        serialized.release();
    }

    private SlabBuffer frame() {
        int size = marshaller.serializedSize(message);
        SlabBuffer buf = pool.allocate(PREFIX + size);
        MemorySegment seg = buf.segment();
        seg.set(LE_INT, FrameHeader.SIZE, size);
        marshaller.write(message, seg.asSlice(PREFIX, size));
        buf.setLength(PREFIX + size);
        return buf;
    }

    /** rdmarpc's way: straight into a pooled off-heap block, released after (as after the send). */
    @Benchmark
    public int serializeIntoSlab() {
        SlabBuffer buf = frame();
        int len = buf.length();
        buf.release();
        return len;
    }

    /** The usual way: a fresh heap array per message. */
    @Benchmark
    public byte[] serializeToByteArray() {
        return message.toByteArray();
    }

    /** rdmarpc's way: parsed straight from the slab segment. */
    @Benchmark
    public BenchRequest parseFromSlab() {
        return marshaller.parse(serializedMessage);
    }

    /** The usual way: parsed from a heap array. */
    @Benchmark
    public BenchRequest parseFromByteArray() throws InvalidProtocolBufferException {
        return BenchRequest.parseFrom(bytes);
    }
}
