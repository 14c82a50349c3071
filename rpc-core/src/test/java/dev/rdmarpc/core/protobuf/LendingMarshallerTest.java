package dev.rdmarpc.core.protobuf;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LendingMarshaller}: a large message reads its lent array until released (in a poisoning pool, a read after the
 * release sees {@link LentArrays#FREED_BYTE}, which is what a use after release would see); a released array is
 * handed to the next message of its size class instead of a fresh one; every message parses to what protobuf's own
 * parser makes of the same bytes; bad bytes fail with INTERNAL and give the array back; the pool keeps its budget.
 */
class LendingMarshallerTest {
    private static final int LARGE = LendingMarshaller.MAX_UNLENT + 1;
    private final LentArrays pool = new LentArrays(64L << 20, true);

    private <T extends com.google.protobuf.MessageLite> LendingMarshaller<T> lending(T defaultInstance) {
        return new LendingMarshaller<>(defaultInstance, pool);
    }

    private static MemorySegment wire(com.google.protobuf.MessageLite m) {
        return MemorySegment.ofArray(m.toByteArray());
    }

    private static ByteString random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return ByteString.copyFrom(b);
    }

    @Test
    void aLargeMessageReadsItsLentArrayUntilReleased() {
        LendingMarshaller<BytesValue> m = lending(BytesValue.getDefaultInstance());
        BytesValue sent = BytesValue.of(random(64 * 1024, 1));
        LentMessage<BytesValue> lent = m.parse(wire(sent));
        assertTrue(lent.isLent());
        assertEquals(sent, lent.message());
        assertEquals(0, pool.keptBytes());
        ByteString value = lent.message().getValue();
        lent.release();
        lent.release();
        assertTrue(lent.isReleased());
        assertEquals(128 * 1024, pool.keptBytes(), "the array (its size class: 128 KiB) is back for reuse");
        assertThrows(IllegalStateException.class, lent::message);
        for (int i = 0; i < value.size(); i += 997) {
            assertEquals(LentArrays.FREED_BYTE, value.byteAt(i), "the field was a view of the array: after the release it reads the fill at " + i);
        }
    }

    @Test
    void aReleasedArrayGoesToTheNextMessage() {
        LendingMarshaller<BytesValue> m = lending(BytesValue.getDefaultInstance());
        BytesValue first = BytesValue.of(random(100_000, 2));
        BytesValue second = BytesValue.of(random(90_000, 3));
        m.parse(wire(first)).release();
        long kept = pool.keptBytes();
        try (LentMessage<BytesValue> lent = m.parse(wire(second))) {
            assertEquals(kept - 128 * 1024, pool.keptBytes(), "the kept array was taken");
            assertEquals(second, lent.message(), "nothing of the array's last message or its fill shows");
        }
        assertEquals(kept, pool.keptBytes());
    }

    @Test
    void smallMessagesLendNothing() {
        LendingMarshaller<BytesValue> m = lending(BytesValue.getDefaultInstance());
        BytesValue small = BytesValue.of(random(LendingMarshaller.MAX_UNLENT - 3, 4));
        try (LentMessage<BytesValue> lent = m.parse(wire(small))) {
            assertFalse(lent.isLent());
            assertEquals(small, lent.message());
        }
        assertEquals(0, pool.keptBytes());
        assertEquals(BytesValue.getDefaultInstance(), m.parse(MemorySegment.ofArray(new byte[0])).message());
    }

    @Test
    void writesTheMessageItWraps() {
        LendingMarshaller<Any> m = lending(Any.getDefaultInstance());
        Any value = Any.newBuilder().setTypeUrl("type.example/x").setValue(random(3 * LARGE, 5)).build();
        LentMessage<Any> out = LentMessage.of(value);
        assertFalse(out.isLent());
        byte[] bytes = new byte[m.serializedSize(out)];
        m.write(out, MemorySegment.ofArray(bytes));
        try (LentMessage<Any> back = m.parse(MemorySegment.ofArray(bytes))) {
            assertTrue(back.isLent());
            assertEquals(value, back.message());
        }
    }

    @Test
    void invalidBytesFailWithInternalAndGiveTheArrayBack() {
        LendingMarshaller<BytesValue> m = lending(BytesValue.getDefaultInstance());
        byte[] good = BytesValue.of(random(2 * LARGE, 6)).toByteArray();
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
        byte[] badTag = good.clone();
        badTag[0] = 0; // field number 0
        byte[] longVarint = new byte[LARGE + 16];
        java.util.Arrays.fill(longVarint, (byte) 0x80);
        long kept = 0;
        for (byte[] bad : new byte[][] {truncated, badTag, longVarint}) {
            StatusException e = assertThrows(StatusException.class, () -> m.parse(MemorySegment.ofArray(bad)));
            assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
            assertTrue(pool.keptBytes() > kept || pool.keptBytes() > 0, "the array came back");
            kept = pool.keptBytes();
        }
    }

    @Test
    void generatedMethodsGetLentRequestsOrResponses() {
        ProtoMarshaller<BytesValue> plain = ProtoMarshaller.of(BytesValue.getDefaultInstance());
        dev.rdmarpc.core.MethodDescriptor<BytesValue, BytesValue> generated = dev.rdmarpc.core.MethodDescriptor.create(
                "test.Lend/Put", dev.rdmarpc.core.MethodDescriptor.MethodType.CLIENT_STREAMING, plain, plain);
        var server = LendingMarshaller.lendingRequests(generated);
        var client = LendingMarshaller.lendingResponses(generated);
        assertEquals("test.Lend/Put", server.getFullMethodName());
        assertEquals(generated.getType(), client.getType());
        assertTrue(server.getRequestMarshaller() instanceof LendingMarshaller<?>);
        assertEquals(plain, server.getResponseMarshaller());
        assertEquals(plain, client.getRequestMarshaller());
        BytesValue v = BytesValue.of(random(2 * LARGE, 8));
        try (LentMessage<BytesValue> lent = client.getResponseMarshaller().parse(wire(v))) {
            assertTrue(lent.isLent());
            assertEquals(v, lent.message());
        }
        dev.rdmarpc.core.MethodDescriptor<BytesValue, BytesValue> notProto = dev.rdmarpc.core.MethodDescriptor.create(
                "test.Lend/Custom", dev.rdmarpc.core.MethodDescriptor.MethodType.UNARY, new CustomMarshaller(plain), plain);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LendingMarshaller.lendingRequests(notProto));
        assertTrue(e.getMessage().contains("test.Lend/Custom's request marshaller is not a ProtoMarshaller"), e.getMessage());
    }

    /** A marshaller of protobuf messages that is not {@link ProtoMarshaller}, as an application may write. */
    private record CustomMarshaller(ProtoMarshaller<BytesValue> inner) implements dev.rdmarpc.core.Marshaller<BytesValue> {
        @Override
        public int serializedSize(BytesValue value) {
            return inner.serializedSize(value);
        }

        @Override
        public void write(BytesValue value, MemorySegment target) {
            inner.write(value, target);
        }

        @Override
        public BytesValue parse(MemorySegment source) {
            return inner.parse(source);
        }
    }

    @Test
    void thePoolKeepsItsBudget() {
        LentArrays small = new LentArrays(256 * 1024, false);
        LendingMarshaller<BytesValue> m = new LendingMarshaller<>(BytesValue.getDefaultInstance(), small);
        BytesValue v = BytesValue.of(random(100_000, 7));
        LentMessage<BytesValue> a = m.parse(wire(v));
        LentMessage<BytesValue> b = m.parse(wire(v));
        LentMessage<BytesValue> c = m.parse(wire(v));
        a.release();
        b.release();
        c.release();
        assertEquals(256 * 1024, small.keptBytes(), "two 128 KiB arrays kept, the third dropped");
        assertEquals(v, m.parse(wire(v)).message(), "a dropped array is only garbage; an unreleased message too");
    }

    // A message type with every case the parser treats apart: a large singular bytes field (1), a string (2), a
    // repeated bytes field (3), a nested message (4), a oneof of bytes (5) and int32 (6), an int64 (7), a fixed64 (8).
    private static final Descriptor MIXED = mixedType();

    private static Descriptor mixedType() {
        DescriptorProto.Builder type = DescriptorProto.newBuilder().setName("Mixed")
                .addOneofDecl(OneofDescriptorProto.newBuilder().setName("choice"));
        type.addField(field("data", 1, Type.TYPE_BYTES, Label.LABEL_OPTIONAL));
        type.addField(field("name", 2, Type.TYPE_STRING, Label.LABEL_OPTIONAL));
        type.addField(field("chunks", 3, Type.TYPE_BYTES, Label.LABEL_REPEATED));
        type.addField(field("inner", 4, Type.TYPE_MESSAGE, Label.LABEL_OPTIONAL).setTypeName(".test.Mixed"));
        type.addField(field("blob", 5, Type.TYPE_BYTES, Label.LABEL_OPTIONAL).setOneofIndex(0));
        type.addField(field("code", 6, Type.TYPE_INT32, Label.LABEL_OPTIONAL).setOneofIndex(0));
        type.addField(field("count", 7, Type.TYPE_INT64, Label.LABEL_OPTIONAL));
        type.addField(field("stamp", 8, Type.TYPE_FIXED64, Label.LABEL_OPTIONAL));
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("mixed.proto").setPackage("test")
                .setSyntax("proto3").addMessageType(type).build();
        try {
            return FileDescriptor.buildFrom(file, new FileDescriptor[0]).findMessageTypeByName("Mixed");
        } catch (DescriptorValidationException e) {
            throw new AssertionError(e);
        }
    }

    private static FieldDescriptorProto.Builder field(String name, int number, Type type, Label label) {
        return FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setType(type).setLabel(label);
    }

    private static DynamicMessage randomMixed(Random r) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(MIXED);
        if (r.nextBoolean()) {
            b.setField(MIXED.findFieldByNumber(1), random(r.nextBoolean() ? LARGE + r.nextInt(3 * LARGE) : r.nextInt(64), r.nextLong()));
        }
        if (r.nextBoolean()) {
            b.setField(MIXED.findFieldByNumber(2), "name-" + r.nextInt());
        }
        for (int i = r.nextInt(3); i > 0; i--) {
            b.addRepeatedField(MIXED.findFieldByNumber(3), random(r.nextBoolean() ? LARGE : 10, r.nextLong()));
        }
        if (r.nextInt(4) == 0) {
            b.setField(MIXED.findFieldByNumber(4), DynamicMessage.newBuilder(MIXED)
                    .setField(MIXED.findFieldByNumber(1), random(LARGE + 1, r.nextLong())).build());
        }
        switch (r.nextInt(3)) {
            case 0 -> b.setField(MIXED.findFieldByNumber(5), random(r.nextBoolean() ? 2 * LARGE : 5, r.nextLong()));
            case 1 -> b.setField(MIXED.findFieldByNumber(6), r.nextInt());
            default -> { }
        }
        if (r.nextBoolean()) {
            b.setField(MIXED.findFieldByNumber(7), r.nextLong());
        }
        if (r.nextBoolean()) {
            b.setField(MIXED.findFieldByNumber(8), r.nextLong());
        }
        return b.build();
    }

    /**
     * Random messages of a type with every kind of field, one alone or two concatenated (protobuf merges them: a later
     * singular field or oneof member replaces an earlier one), with unknown fields now and then: each parses to exactly
     * what protobuf's parser makes of the same bytes, its bytes fields, nested and repeated ones too, views of the lent
     * array.
     */
    @Test
    void everyMessageParsesAsProtobufParsesIt() throws Exception {
        LendingMarshaller<DynamicMessage> m = lending(DynamicMessage.getDefaultInstance(MIXED));
        Random r = new Random(42);
        int lent = 0;
        for (int i = 0; i < 400; i++) {
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            randomMixed(r).writeTo(wire);
            if (r.nextInt(3) == 0) {
                randomMixed(r).writeTo(wire);
            }
            if (r.nextInt(5) == 0) {
                wire.write(new byte[] {(byte) (99 << 3), 7}); // field 99, varint 7: unknown to the type
            }
            byte[] bytes = wire.toByteArray();
            DynamicMessage expected = DynamicMessage.parseFrom(MIXED, bytes);
            try (LentMessage<DynamicMessage> got = m.parse(MemorySegment.ofArray(bytes))) {
                assertEquals(expected, got.message(), "message " + i);
                assertEquals(expected.getUnknownFields(), got.message().getUnknownFields(), "message " + i);
                lent += got.isLent() ? 1 : 0;
            }
        }
        assertTrue(lent > 100, lent + " of 400 lent");
    }
}
