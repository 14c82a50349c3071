package dev.rdmarpc.core;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** Puts {@link ServerInterceptor}s in front of a service's handlers, in grpc-java's order. */
public final class ServerInterceptors {
    private ServerInterceptors() {
    }

    /**
     * The service with every method's handler behind the interceptors; the <em>last</em> one given runs first (as
     * if each call of this method wrapped the service once more), the first one given runs next to the handler.
     */
    public static ServiceDefinition intercept(ServiceDefinition service, ServerInterceptor... interceptors) {
        return intercept(service, Arrays.asList(interceptors));
    }

    /** As {@link #intercept(ServiceDefinition, ServerInterceptor...)}, for a service implementation. */
    public static ServiceDefinition intercept(BindableService service, ServerInterceptor... interceptors) {
        return intercept(service.bindService(), Arrays.asList(interceptors));
    }

    /** As {@link #intercept(ServiceDefinition, ServerInterceptor...)}: the last interceptor in the list runs first. */
    public static ServiceDefinition intercept(ServiceDefinition service, List<? extends ServerInterceptor> interceptors) {
        Objects.requireNonNull(service, "service");
        if (interceptors.isEmpty()) {
            return service;
        }
        ServiceDefinition.Builder b = ServiceDefinition.builder(service.getServiceName())
                .setSchemaDescriptor(service.getSchemaDescriptor());
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            addIntercepted(b, m, interceptors);
        }
        return b.build();
    }

    /** As {@link #intercept(ServiceDefinition, ServerInterceptor...)} but in reading order: the first one given runs first. */
    public static ServiceDefinition interceptForward(ServiceDefinition service, ServerInterceptor... interceptors) {
        return intercept(service, Arrays.asList(interceptors).reversed());
    }

    /** As {@link #interceptForward(ServiceDefinition, ServerInterceptor...)}, for a service implementation. */
    public static ServiceDefinition interceptForward(BindableService service, ServerInterceptor... interceptors) {
        return interceptForward(service.bindService(), interceptors);
    }

    /** One method's definition with its handler behind the interceptors (the last in the list runs first). */
    public static <ReqT, RespT> ServerMethodDefinition<ReqT, RespT> intercept(ServerMethodDefinition<ReqT, RespT> method,
                                                                              List<? extends ServerInterceptor> interceptors) {
        ServerCallHandler<ReqT, RespT> h = method.handler();
        for (ServerInterceptor i : interceptors) {
            h = new InterceptedHandler<>(Objects.requireNonNull(i, "interceptor"), h);
        }
        return method.withHandler(h);
    }

    private static <ReqT, RespT> void addIntercepted(ServiceDefinition.Builder b, ServerMethodDefinition<ReqT, RespT> m,
                                                     List<? extends ServerInterceptor> interceptors) {
        b.addMethod(intercept(m, interceptors));
    }

    /** A handler that lets one interceptor start the call, with the wrapped handler as its {@code next}. */
    private record InterceptedHandler<ReqT, RespT>(ServerInterceptor interceptor, ServerCallHandler<ReqT, RespT> next)
            implements ServerCallHandler<ReqT, RespT> {
        @Override
        public ServerCall.Listener<ReqT> startCall(ServerCall<ReqT, RespT> call, Metadata headers) {
            return interceptor.interceptCall(call, headers, next);
        }
    }
}
