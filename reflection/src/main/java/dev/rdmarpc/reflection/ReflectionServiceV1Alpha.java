package dev.rdmarpc.reflection;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.reflection.v1alpha.ServerReflectionRequest;
import dev.rdmarpc.reflection.v1alpha.ServerReflectionResponse;
import dev.rdmarpc.reflection.v1alpha.ServerReflectionRpc;

/**
 * gRPC server reflection in its older version, {@code grpc.reflection.v1alpha.ServerReflection}, which some clients
 * still ask (alone, or after v1 fails): the same answers as {@link ReflectionService}, whose messages it shares field
 * for field. Add it beside that one: {@code .addService(new ReflectionService()).addService(new ReflectionServiceV1Alpha())}.
 */
public final class ReflectionServiceV1Alpha implements BindableService {
    private final ReflectionBinding binding = new ReflectionBinding();

    @Override
    public ServiceDefinition bindService() {
        return binding.bind(new Schema().bindService(), ServerReflectionRpc.getServerReflectionInfoMethod(),
                (index, responses) -> {
                    ReflectionStream v1 = new ReflectionStream(index, responses,
                            r -> responses.onNext(convert(r, ServerReflectionResponse.parser())));
                    return new StreamObserver<ServerReflectionRequest>() {
                        @Override
                        public void onNext(ServerReflectionRequest request) {
                            v1.onNext(convert(request, dev.rdmarpc.reflection.v1.ServerReflectionRequest.parser()));
                        }

                        @Override
                        public void onError(Throwable t) {
                            v1.onError(t);
                        }

                        @Override
                        public void onCompleted() {
                            v1.onCompleted();
                        }
                    };
                });
    }

    /** A message as the other version's type: both versions have the same fields, so the bytes are the same. */
    private static <T> T convert(MessageLite message, Parser<T> as) {
        try {
            return as.parseFrom(message.toByteString());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("v1 and v1alpha reflection messages differ: " + e.getMessage(), e);
        }
    }

    /** The generated service, for its name and schema descriptor: the calls are served by {@link ReflectionStream}. */
    private static final class Schema extends ServerReflectionRpc.ServerReflectionImplBase {
    }
}
