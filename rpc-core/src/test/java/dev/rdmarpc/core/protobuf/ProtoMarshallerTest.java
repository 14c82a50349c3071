package dev.rdmarpc.core.protobuf;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Protobuf straight into a slab and back, at every size path (empty, scratch copy, streamed). */
class ProtoMarshallerTest {
    private final SlabPool pool = new SlabPool(0, true);

    @AfterEach
    void noLeaks() {
        assertEquals(0, pool.inUseBuffers(), pool::describeLiveBuffers);
    }

    private <T extends com.google.protobuf.MessageLite> T roundTrip(ProtoMarshaller<T> m, T value) {
        int size = m.serializedSize(value);
        SlabBuffer buf = pool.allocate(size);
        try {
            m.write(value, buf.segment().asSlice(0, size));
            assertEquals(ByteString.copyFrom(buf.segment().asSlice(0, size).toArray(ValueLayout.JAVA_BYTE)), value.toByteString(),
                    "the slab holds exactly protobuf's own encoding");
            return m.parse(buf.segment().asSlice(0, size));
        } finally {
            buf.release();
        }
    }

    private static BytesValue bytes(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return BytesValue.of(ByteString.copyFrom(b));
    }

    @Test
    void emptySmallAndLargeMessagesRoundTrip() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        assertSame(BytesValue.getDefaultInstance(), roundTrip(m, BytesValue.getDefaultInstance()));
        for (int n : new int[]{1, 100, ProtoMarshaller.SMALL_WRITE - 3, ProtoMarshaller.SMALL_WRITE + 1, ProtoMarshaller.SCRATCH_SIZE - 10, ProtoMarshaller.SCRATCH_SIZE + 10, 3 << 20}) {
            BytesValue v = bytes(n);
            assertEquals(v, roundTrip(m, v), "size " + n);
        }
    }

    @Test
    void parsedValuesDoNotAliasTheScratchBuffer() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        BytesValue first = roundTrip(m, bytes(50));
        roundTrip(m, bytes(60));
        assertEquals(bytes(50), first, "a later parse on the same thread must not change an earlier result");
    }

    @Test
    void nestedMessages() {
        ProtoMarshaller<Struct> m = ProtoMarshaller.of(Struct.getDefaultInstance());
        Struct s = Struct.newBuilder()
                .putFields("name", Value.newBuilder().setStringValue("rdmarpc").build())
                .putFields("list", Value.newBuilder().setListValue(ListValue.newBuilder()
                        .addValues(Value.newBuilder().setNumberValue(1.5)).build()).build())
                .build();
        assertEquals(s, roundTrip(m, s));
    }

    @Test
    void garbageIsInternal() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        SlabBuffer buf = pool.allocate(4);
        try {
            buf.segment().set(ValueLayout.JAVA_INT_UNALIGNED, 0, 0xffffffff);
            StatusException e = assertThrows(StatusException.class, () -> m.parse(buf.segment().asSlice(0, 4)));
            assertEquals(dev.rdmarpc.core.Status.Code.INTERNAL, e.getStatus().getCode());
        } finally {
            buf.release();
        }
    }

    @Test
    void aTargetOfTheWrongSizeFailsAndTheNextWriteOnTheThreadIsClean() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        for (int n : new int[]{100, ProtoMarshaller.SMALL_WRITE * 2}) {
            BytesValue v = bytes(n);
            int size = m.serializedSize(v);
            SlabBuffer buf = pool.allocate(size + 1);
            try {
                IllegalStateException small = assertThrows(IllegalStateException.class,
                        () -> m.write(v, buf.segment().asSlice(0, size - 1)));
                assertTrue(small.getMessage().contains("serializ"), small.getMessage());
                IllegalStateException large = assertThrows(IllegalStateException.class,
                        () -> m.write(v, buf.segment().asSlice(0, size + 1)));
                assertTrue(large.getMessage().contains("wrote " + size + " of " + (size + 1)), large.getMessage());
            } finally {
                buf.release();
            }
            assertEquals(v, roundTrip(m, v), "size " + n + " after failed writes");
        }
    }

    @Test
    void writesAndParsesAtAnOffsetWithoutTouchingTheBytesAround() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        for (int n : new int[]{0, 50, ProtoMarshaller.SMALL_WRITE + 100, ProtoMarshaller.SCRATCH_SIZE + 100}) {
            BytesValue v = bytes(n);
            int size = m.serializedSize(v);
            SlabBuffer buf = pool.allocate(size + 40);
            try {
                buf.segment().fill((byte) 0x5A);
                m.write(v, buf.segment(), 20, size);
                assertEquals(0x5A, buf.segment().get(ValueLayout.JAVA_BYTE, 19));
                assertEquals(0x5A, buf.segment().get(ValueLayout.JAVA_BYTE, 20 + size));
                assertEquals(v, m.parse(buf.segment(), 20, size), "size " + n);
            } finally {
                buf.release();
            }
        }
    }

    @Test
    void aLargeParsedMessageDoesNotShareTheSlab() {
        ProtoMarshaller<BytesValue> m = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        BytesValue v = bytes(ProtoMarshaller.SCRATCH_SIZE * 2);
        int size = m.serializedSize(v);
        SlabBuffer buf = pool.allocate(size);
        BytesValue parsed;
        try {
            m.write(v, buf.segment().asSlice(0, size));
            parsed = m.parse(buf.segment(), 0, size);
            buf.segment().fill((byte) 0);
        } finally {
            buf.release();
        }
        assertEquals(v, parsed, "the slab was cleared and freed after parsing");
    }
}
