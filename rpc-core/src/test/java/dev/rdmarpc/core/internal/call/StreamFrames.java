package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.protocol.FrameFlags;
import dev.rdmarpc.core.protocol.FrameHeader;
import dev.rdmarpc.core.protocol.FrameType;
import dev.rdmarpc.core.protocol.Frames;
import dev.rdmarpc.core.protocol.Hello;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Frames a test writes as the peer of a stream, and the methods it calls. */
final class StreamFrames {
    private StreamFrames() {
    }

    /** Strings as messages, UTF-8. */
    static final Marshaller<String> STRING = new Marshaller<>() {
        @Override
        public int serializedSize(String value) {
            return value.getBytes(StandardCharsets.UTF_8).length;
        }

        @Override
        public void write(String value, MemorySegment target) {
            byte[] b = value.getBytes(StandardCharsets.UTF_8);
            MemorySegment.copy(b, 0, target, ValueLayout.JAVA_BYTE, 0, b.length);
        }

        @Override
        public String parse(MemorySegment source) {
            return new String(source.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        }
    };

    static final MethodDescriptor<String, String> UNARY = MethodDescriptor.create("test.S/Unary", MethodType.UNARY, STRING, STRING);
    static final MethodDescriptor<String, String> BIDI = MethodDescriptor.create("test.S/Bidi", MethodType.BIDI_STREAMING, STRING, STRING);

    static SlabBuffer hello(SlabPool pool) {
        return Frames.hello(pool, new Hello(Hello.VERSION, 1 << 20, 1 << 20, 4 << 20, Map.of()));
    }

    /** One MESSAGE frame carrying a whole message. */
    static byte[] message(int streamId, String text, int extraFlags) {
        byte[] data = text.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(FrameHeader.SIZE + 4 + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(4 + data.length).put((byte) FrameType.MESSAGE).put((byte) (FrameFlags.BEGIN | FrameFlags.END | extraFlags))
                .putShort((short) 0).putInt(streamId).putInt(0).putInt(data.length).put(data);
        return b.array();
    }

    static SlabBuffer trailers(SlabPool pool, int streamId, Status status) {
        return Frames.trailers(pool, streamId, status, new Metadata());
    }

    static SlabBuffer requestHeaders(SlabPool pool, int streamId, MethodDescriptor<?, ?> method, boolean endStream, long timeoutNanos) {
        return Frames.requestHeaders(pool, streamId, endStream, method.getFullMethodName(), "test", timeoutNanos, new Metadata());
    }

    /** The message text of a MESSAGE frame core sent. */
    static String text(FakeConnection.Sent s) {
        return new String(s.payload(), 4, s.payload().length - 4, StandardCharsets.UTF_8);
    }
}
