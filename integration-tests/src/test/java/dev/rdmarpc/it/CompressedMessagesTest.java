package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The per-message COMPRESSED flag: a marshaller that compresses marks its messages, the flag crosses the wire on the
 * first frame of each message (also for messages split over several frames), the receiving marshaller is told; a
 * marshaller that cannot decompress fails only that call with INTERNAL.
 */
class CompressedMessagesTest extends LoopbackTest {

    /** Bytes as they travel, and whether they are gzip-compressed. */
    record Packed(byte[] wire, boolean compressed) {
        static Packed gzip(byte[] plain) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
                gz.write(plain);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new Packed(out.toByteArray(), true);
        }

        byte[] plain() {
            if (!compressed) {
                return wire;
            }
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(wire))) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    static final Marshaller<Packed> PACKED = new Marshaller<>() {
        @Override
        public int serializedSize(Packed value) {
            return value.wire().length;
        }

        @Override
        public void write(Packed value, MemorySegment target) {
            MemorySegment.copy(value.wire(), 0, target, ValueLayout.JAVA_BYTE, 0, value.wire().length);
        }

        @Override
        public boolean isCompressed(Packed value) {
            return value.compressed();
        }

        @Override
        public Packed parse(MemorySegment source) {
            return new Packed(source.toArray(ValueLayout.JAVA_BYTE), false);
        }

        @Override
        public Packed parse(MemorySegment segment, long offset, int length, boolean compressed) {
            return new Packed(segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), compressed);
        }
    };

    static final MethodDescriptor<Packed, Packed> ECHO =
            MethodDescriptor.create("test.Packed/Echo", MethodType.UNARY, PACKED, PACKED);
    static final MethodDescriptor<Packed, Packed> PLAIN_ECHO =
            MethodDescriptor.create(TestService.NAME + "/Echo", MethodType.UNARY, PACKED, PACKED);

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        ServiceDefinition packed = ServiceDefinition.builder("test.Packed")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, obs) -> {
                    // answer in kind, and say in the first byte whether the request arrived compressed
                    byte[] plain = req.plain();
                    byte[] reply = new byte[plain.length + 1];
                    reply[0] = (byte) (req.compressed() ? 1 : 0);
                    System.arraycopy(plain, 0, reply, 1, plain.length);
                    obs.onNext(req.compressed() ? Packed.gzip(reply) : new Packed(reply, false));
                    obs.onCompleted();
                }))
                .build();
        return b.addService(packed).maxInboundMessageSize(8 << 20);
    }

    @Test
    void compressedAndPlainMessagesArriveMarkedAsTheyWereSent() throws Exception {
        byte[] text = "rdmarpc ".repeat(4096).getBytes();
        Packed answer = ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, Packed.gzip(text));
        assertTrue(answer.compressed(), "the response came back compressed");
        assertTrue(answer.wire().length < text.length / 10, "gzip did shrink it: " + answer.wire().length);
        byte[] plain = answer.plain();
        assertEquals(1, plain[0], "the server saw a compressed request");
        assertArrayEquals(text, java.util.Arrays.copyOfRange(plain, 1, plain.length));

        Packed uncompressed = ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, new Packed(text, false));
        assertFalse(uncompressed.compressed());
        assertEquals(0, uncompressed.wire()[0], "the server saw a plain request");
    }

    @Test
    void aMessageSplitOverFramesKeepsItsFlag() throws Exception {
        // incompressible bytes over several MESSAGE frames (1 MiB each): the flag rides on the first one
        byte[] noise = new byte[3 << 20];
        new java.util.Random(3).nextBytes(noise);
        Packed big = Packed.gzip(noise);
        assertTrue(big.wire().length > 2 << 20);
        Packed answer = ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, big);
        assertTrue(answer.compressed());
        byte[] plain = answer.plain();
        assertEquals(1, plain[0]);
        assertArrayEquals(noise, java.util.Arrays.copyOfRange(plain, 1, plain.length));
    }

    @Test
    void aMarshallerThatCannotDecompressFailsOnlyThatCall() throws Exception {
        StatusException e = assertThrows(StatusException.class, () -> ClientCalls.blockingUnaryCall(channel, PLAIN_ECHO,
                CallOptions.DEFAULT, Packed.gzip(new byte[100])));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("compressed"), e.getStatus().getDescription());
        Packed ok = ClientCalls.blockingUnaryCall(channel, PLAIN_ECHO, CallOptions.DEFAULT, new Packed(new byte[]{7}, false));
        assertArrayEquals(new byte[]{7}, ok.wire(), "the connection carries on");
        assertEquals(1, server.connectionCount());
    }
}
