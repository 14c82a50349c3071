package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.Marshaller;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.protobuf.LendingMarshaller;
import dev.rdmarpc.core.protobuf.LentMessage;

/**
 * The benchmark service's methods with each side receiving {@link LentMessage}s: the server's requests and the client's
 * responses go through {@link LendingMarshaller}, and each lent message is released as soon as it has been echoed
 * (sending copies it) or handed to the client's observer. The bytes on the wire are the generated stubs'.
 */
final class LentCalls {
    private static final LendingMarshaller<BenchRequest> REQUESTS = LendingMarshaller.of(BenchRequest.getDefaultInstance());
    private static final LendingMarshaller<BenchResponse> RESPONSES = LendingMarshaller.of(BenchResponse.getDefaultInstance());

    private LentCalls() {
    }

    /** The generated method {@code m} with other marshallers. */
    private static <Q, R> MethodDescriptor<Q, R> with(MethodDescriptor<?, ?> m, Marshaller<Q> requests, Marshaller<R> responses) {
        return MethodDescriptor.create(m.getFullMethodName(), m.getType(), requests, responses);
    }

    /** The service {@code echo} implements, its requests lent. */
    static ServiceDefinition service(EchoService<StreamObserver<BenchResponse>> echo) {
        Marshaller<BenchResponse> plain = BenchServiceRpc.getUnaryMethod().getResponseMarshaller();
        return ServiceDefinition.builder(BenchServiceRpc.SERVICE_NAME)
                .addMethod(with(BenchServiceRpc.getUnaryMethod(), REQUESTS, plain),
                        ServerCalls.asyncUnaryCall((LentMessage<BenchRequest> request, StreamObserver<BenchResponse> responses) -> {
                            try (request) {
                                echo.unary(request.message(), responses);
                            }
                        }))
                .addMethod(with(BenchServiceRpc.getServerStreamMethod(), REQUESTS, plain),
                        ServerCalls.asyncServerStreamingCall((LentMessage<BenchRequest> request, StreamObserver<BenchResponse> responses) -> {
                            try (request) {
                                echo.serverStream(request.message(), responses);
                            }
                        }))
                .addMethod(with(BenchServiceRpc.getBidiMethod(), REQUESTS, plain),
                        ServerCalls.asyncBidiStreamingCall((StreamObserver<BenchResponse> responses) ->
                                releasing(echo.bidi(responses))))
                .build();
    }

    /** The calls of a client on {@code channel} whose responses are lent, each released after {@code observer} saw it. */
    static StubCalls client(RpcChannel channel) {
        Marshaller<BenchRequest> plain = BenchServiceRpc.getUnaryMethod().getRequestMarshaller();
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> unary = with(BenchServiceRpc.getUnaryMethod(), plain, RESPONSES);
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> serverStream =
                with(BenchServiceRpc.getServerStreamMethod(), plain, RESPONSES);
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> bidi = with(BenchServiceRpc.getBidiMethod(), plain, RESPONSES);
        return new StubCalls(
                (request, observer) -> ClientCalls.asyncUnaryCall(channel, unary, CallOptions.DEFAULT, request, releasing(observer)),
                (request, observer) -> ClientCalls.asyncServerStreamingCall(channel.newCall(serverStream, CallOptions.DEFAULT),
                        request, releasing(observer)),
                observer -> {
                    StreamObserver<BenchRequest> requests = ClientCalls.asyncBidiStreamingCall(
                            channel.newCall(bidi, CallOptions.DEFAULT), releasing(observer));
                    return new StubCalls.RequestStream(requests::onNext, requests::onCompleted);
                });
    }

    /** An observer of lent messages handing each message to {@code observer}, then releasing it. */
    private static <V> StreamObserver<LentMessage<V>> releasing(StreamObserver<V> observer) {
        return new StreamObserver<>() {
            @Override
            public void onNext(LentMessage<V> value) {
                try (value) {
                    observer.onNext(value.message());
                }
            }

            @Override
            public void onError(Throwable t) {
                observer.onError(t);
            }

            @Override
            public void onCompleted() {
                observer.onCompleted();
            }
        };
    }
}
