package dev.rdmarpc.it;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

/** {@link TestService}'s methods as a stock grpc-java client calls them (bytes in, bytes out). */
final class StockGrpc {
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    static final MethodDescriptor<byte[], byte[]> ECHO = method("Echo", MethodDescriptor.MethodType.UNARY);
    static final MethodDescriptor<byte[], byte[]> STREAM = method("Stream", MethodDescriptor.MethodType.SERVER_STREAMING);
    static final MethodDescriptor<byte[], byte[]> HOLD = method("Hold", MethodDescriptor.MethodType.UNARY);
    static final MethodDescriptor<byte[], byte[]> CHAT = method("Chat", MethodDescriptor.MethodType.BIDI_STREAMING);

    private StockGrpc() {
    }

    private static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(TestService.NAME, name))
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    /** A unary method {@code fullName} with byte-array messages, as a stock client calls it. */
    static MethodDescriptor<byte[], byte[]> bytesMethod(String fullName) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullName).setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    static byte[] echo(Channel ch, byte[] request) {
        return ClientCalls.blockingUnaryCall(ch, ECHO, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), request);
    }

    static Iterator<byte[]> stream(Channel ch, int count, int size) {
        byte[] req = new byte[8];
        System.arraycopy(Bytes.ofInt(count), 0, req, 0, 4);
        System.arraycopy(Bytes.ofInt(size), 0, req, 4, 4);
        return ClientCalls.blockingServerStreamingCall(ch, STREAM, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), req);
    }
}
