package dev.rdmarpc.core;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A named service and the handlers of its methods, ready to add to an {@link RpcServer}. */
public final class ServiceDefinition {
    private final String serviceName;
    private final Map<String, ServerMethodDefinition<?, ?>> methods;

    private ServiceDefinition(String serviceName, Map<String, ServerMethodDefinition<?, ?>> methods) {
        this.serviceName = serviceName;
        this.methods = Collections.unmodifiableMap(methods);
    }

    public static Builder builder(String serviceName) {
        return new Builder(serviceName);
    }

    public String getServiceName() {
        return serviceName;
    }

    public Collection<ServerMethodDefinition<?, ?>> getMethods() {
        return methods.values();
    }

    /** The method with this full name, or null. */
    public ServerMethodDefinition<?, ?> getMethod(String fullMethodName) {
        return methods.get(fullMethodName);
    }

    /** Builds a {@link ServiceDefinition}. */
    public static final class Builder {
        private final String serviceName;
        private final Map<String, ServerMethodDefinition<?, ?>> methods = new LinkedHashMap<>();

        private Builder(String serviceName) {
            this.serviceName = serviceName;
        }

        public <ReqT, RespT> Builder addMethod(MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler) {
            if (!method.getServiceName().equals(serviceName)) {
                throw new IllegalArgumentException("method " + method.getFullMethodName() + " is not in service " + serviceName);
            }
            if (methods.putIfAbsent(method.getFullMethodName(), ServerMethodDefinition.create(method, handler)) != null) {
                throw new IllegalArgumentException("method added twice: " + method.getFullMethodName());
            }
            return this;
        }

        public ServiceDefinition build() {
            return new ServiceDefinition(serviceName, new LinkedHashMap<>(methods));
        }
    }
}
