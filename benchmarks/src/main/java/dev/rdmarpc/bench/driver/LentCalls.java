package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.protobuf.LendingMarshaller;
import dev.rdmarpc.core.protobuf.LentMessage;

/**
 * The benchmark service's methods with each side receiving {@link LentMessage}s: the server's requests and the client's
 * responses go through {@link LendingMarshaller} (the generated methods, {@code lendingRequests}/{@code lendingResponses}), and each lent message is released as soon as it has been echoed
 * (sending copies it) or handed to the client's observer. The bytes on the wire are the generated stubs'.
 */
final class LentCalls {
    private LentCalls() {
    }

    /** The service {@code echo} implements, its requests lent. */
    static ServiceDefinition service(EchoService<StreamObserver<BenchResponse>> echo) {
        return ServiceDefinition.builder(BenchServiceRpc.SERVICE_NAME)
                .addMethod(LendingMarshaller.lendingRequests(BenchServiceRpc.getUnaryMethod()),
                        ServerCalls.asyncUnaryCall((LentMessage<BenchRequest> request, StreamObserver<BenchResponse> responses) -> {
                            try (request) {
                                echo.unary(request.message(), responses);
                            }
                        }))
                .addMethod(LendingMarshaller.lendingRequests(BenchServiceRpc.getServerStreamMethod()),
                        ServerCalls.asyncServerStreamingCall((LentMessage<BenchRequest> request, StreamObserver<BenchResponse> responses) -> {
                            try (request) {
                                echo.serverStream(request.message(), responses);
                            }
                        }))
                .addMethod(LendingMarshaller.lendingRequests(BenchServiceRpc.getBidiMethod()),
                        ServerCalls.asyncBidiStreamingCall((StreamObserver<BenchResponse> responses) ->
                                releasing(echo.bidi(responses))))
                .build();
    }

    /** The calls of a client on {@code channel} whose responses are lent, each released after {@code observer} saw it. */
    static StubCalls client(RpcChannel channel) {
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> unary =
                LendingMarshaller.lendingResponses(BenchServiceRpc.getUnaryMethod());
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> serverStream =
                LendingMarshaller.lendingResponses(BenchServiceRpc.getServerStreamMethod());
        MethodDescriptor<BenchRequest, LentMessage<BenchResponse>> bidi =
                LendingMarshaller.lendingResponses(BenchServiceRpc.getBidiMethod());
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
