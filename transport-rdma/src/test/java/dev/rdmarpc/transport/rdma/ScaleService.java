package dev.rdmarpc.transport.rdma;

import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;

/**
 * What the scale harness ({@link ScaleMain}) calls: {@code Ping} echoes its request (64 B calls), {@code Sink} answers
 * a request of any size (1 MiB calls, by rendezvous) with its length in 4 bytes ({@link RdmaPerfMain} has the same two).
 */
final class ScaleService {
    static final String NAME = "rdma.scale.Scale";
    static final MethodDescriptor<byte[], byte[]> PING = MethodDescriptor.create(NAME + "/Ping", MethodType.UNARY,
            Bytes.MARSHALLER, Bytes.MARSHALLER);
    static final MethodDescriptor<byte[], byte[]> SINK = MethodDescriptor.create(NAME + "/Sink", MethodType.UNARY,
            Bytes.MARSHALLER, Bytes.MARSHALLER);

    private ScaleService() {
    }

    /** The request of a call of {@code size} bytes: 64 B and below are echoed, larger ones sunk. */
    static MethodDescriptor<byte[], byte[]> methodFor(int size) {
        return size <= 64 ? PING : SINK;
    }

    static ServiceDefinition definition() {
        return withPingAndSink(ServiceDefinition.builder(NAME), PING, SINK).build();
    }

    /** Adds {@code ping} (echoes its request) and {@code sink} (answers with the request's length) to {@code service}. */
    static ServiceDefinition.Builder withPingAndSink(ServiceDefinition.Builder service,
                                                     MethodDescriptor<byte[], byte[]> ping,
                                                     MethodDescriptor<byte[], byte[]> sink) {
        return service
                .addMethod(ping, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(req);
                    obs.onCompleted();
                }))
                .addMethod(sink, ServerCalls.asyncUnaryCall((req, obs) -> {
                    obs.onNext(Bytes.ofInts(req.length));
                    obs.onCompleted();
                }));
    }
}
