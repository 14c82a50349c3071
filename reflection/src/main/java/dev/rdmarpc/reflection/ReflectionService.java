package dev.rdmarpc.reflection;

import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.ServiceDefinition;
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
    private final ReflectionBinding binding = new ReflectionBinding();

    @Override
    public ServiceDefinition bindService() {
        return binding.bind(new Schema().bindService(), ServerReflectionRpc.getServerReflectionInfoMethod(),
                (index, responses) -> new ReflectionStream(index, responses, responses::onNext));
    }

    /** The generated service, for its name and schema descriptor: the calls are served by {@link ReflectionStream}. */
    private static final class Schema extends ServerReflectionRpc.ServerReflectionImplBase {
    }
}
