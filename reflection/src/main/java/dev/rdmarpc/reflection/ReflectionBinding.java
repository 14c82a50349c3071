package dev.rdmarpc.reflection;

import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.StreamObserver;

import java.util.List;

/**
 * How a version of the reflection service is bound: the generated definition's name and schema, its one bidi method
 * answered from the {@link ReflectionIndex} of the server each call arrives at. The index is built on the first call
 * and kept while calls come from the same server (a server's services never change once it is built).
 */
final class ReflectionBinding {
    /** Starts the request side of one call, answering from {@code index} on {@code responses}. */
    interface Stream<ReqT, RespT> {
        StreamObserver<ReqT> start(ReflectionIndex index, ServerCallStreamObserver<RespT> responses);
    }

    private volatile ReflectionIndex latest;

    /** {@code generated}'s name and schema with {@code method} served by {@code stream}. */
    <ReqT, RespT> ServiceDefinition bind(ServiceDefinition generated, MethodDescriptor<ReqT, RespT> method,
                                         Stream<ReqT, RespT> stream) {
        return ServiceDefinition.builder(generated.getServiceName())
                .setSchemaDescriptor(generated.getSchemaDescriptor())
                .addMethod(method, (call, headers) -> ServerCalls.<ReqT, RespT>asyncBidiStreamingCall(responses ->
                        stream.start(index(call.getServerServices()), (ServerCallStreamObserver<RespT>) responses))
                        .startCall(call, headers))
                .build();
    }

    /** The index of {@code services}, the list a call's {@code getServerServices()} gave. */
    private ReflectionIndex index(List<ServiceDefinition> services) {
        ReflectionIndex index = latest;
        if (index == null || !index.describes(services)) {
            index = new ReflectionIndex(services); // built twice at worst, by racing first calls: each is the same
            latest = index;
        }
        return index;
    }
}
