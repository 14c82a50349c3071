package dev.rdmarpc.reflection;

import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.reflection.v1.ServerReflectionRequest;
import dev.rdmarpc.reflection.v1.ServerReflectionResponse;
import dev.rdmarpc.reflection.v1.ServerReflectionRpc;

/**
 * gRPC server reflection ({@code grpc.reflection.v1.ServerReflection}) for a native server: lists the server's
 * services and gives the .proto files that define them (with their dependencies) by file name, by symbol and by
 * extension, so grpcurl-like tools can list, describe and call them. It describes every service of the server it is
 * added to whose definition carries a proto schema, as the classes codegen generates do. Added in one line:
 * {@code RpcServer.forPort(port).addService(new ReflectionService())}; older clients that ask only v1alpha need
 * {@link ReflectionServiceV1Alpha} too.
 */
public final class ReflectionService implements BindableService {
    private final ServerIndexes indexes = new ServerIndexes();

    @Override
    public ServiceDefinition bindService() {
        ServiceDefinition generated = new Schema().bindService();
        return ServiceDefinition.builder(generated.getServiceName())
                .setSchemaDescriptor(generated.getSchemaDescriptor())
                .addMethod(ServerReflectionRpc.getServerReflectionInfoMethod(), (call, headers) ->
                        ServerCalls.<ServerReflectionRequest, ServerReflectionResponse>asyncBidiStreamingCall(responses -> {
                            var observer = (ServerCallStreamObserver<ServerReflectionResponse>) responses;
                            return new ReflectionStream(indexes.of(call.getServerServices()), observer, observer::onNext);
                        }).startCall(call, headers))
                .build();
    }

    /** The generated service, for its schema descriptor: the calls are served above. */
    private static final class Schema extends ServerReflectionRpc.ServerReflectionImplBase {
    }
}
