package dev.rdmarpc.core;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A named service and the handlers of its methods, ready to add to an {@link RpcServer}. */
public final class ServiceDefinition {
    private final String serviceName;
    private final Map<String, ServerMethodDefinition<?, ?>> methods;
    private final Object schemaDescriptor;

    private ServiceDefinition(String serviceName, Map<String, ServerMethodDefinition<?, ?>> methods,
                              Object schemaDescriptor) {
        this.serviceName = serviceName;
        this.methods = Collections.unmodifiableMap(methods);
        this.schemaDescriptor = schemaDescriptor;
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

    /**
     * What describes the service's schema, or null: for a service generated from a .proto file, a
     * {@link dev.rdmarpc.core.protobuf.ProtoServiceDescriptorSupplier} (server reflection reads it), as grpc-java's
     * {@code ServiceDescriptor.getSchemaDescriptor()}.
     */
    public Object getSchemaDescriptor() {
        return schemaDescriptor;
    }

    /** The method with this full name, or null. */
    public ServerMethodDefinition<?, ?> getMethod(String fullMethodName) {
        return methods.get(fullMethodName);
    }

    /**
     * This service with every method accepting an attachment of up to {@code maxBytes} with each request message
     * (see {@link ServerMethodDefinition#withAttachments}); a server accepts none unless a method or the server
     * itself enables them. For a generated service: {@code impl.bindService().withAttachments(16 << 20)}.
     */
    public ServiceDefinition withAttachments(int maxBytes) {
        Map<String, ServerMethodDefinition<?, ?>> copy = new LinkedHashMap<>();
        for (ServerMethodDefinition<?, ?> m : methods.values()) {
            copy.put(m.method().getFullMethodName(), m.withAttachments(maxBytes));
        }
        return new ServiceDefinition(serviceName, copy, schemaDescriptor);
    }

    /** This service with {@code method} (one of its methods) accepting an attachment of up to {@code maxBytes}. */
    public ServiceDefinition withAttachments(MethodDescriptor<?, ?> method, int maxBytes) {
        ServerMethodDefinition<?, ?> m = methods.get(method.getFullMethodName());
        if (m == null) {
            throw new IllegalArgumentException("method " + method.getFullMethodName() + " is not in service " + serviceName);
        }
        Map<String, ServerMethodDefinition<?, ?>> copy = new LinkedHashMap<>(methods);
        copy.put(method.getFullMethodName(), m.withAttachments(maxBytes));
        return new ServiceDefinition(serviceName, copy, schemaDescriptor);
    }

    /** Builds a {@link ServiceDefinition}. */
    public static final class Builder {
        private final String serviceName;
        private final Map<String, ServerMethodDefinition<?, ?>> methods = new LinkedHashMap<>();
        private Object schemaDescriptor;

        private Builder(String serviceName) {
            this.serviceName = serviceName;
        }

        /** Sets what describes the service's schema (see {@link ServiceDefinition#getSchemaDescriptor}). */
        public Builder setSchemaDescriptor(Object schemaDescriptor) {
            this.schemaDescriptor = schemaDescriptor;
            return this;
        }

        public <ReqT, RespT> Builder addMethod(MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler) {
            return addMethod(ServerMethodDefinition.create(method, handler));
        }

        /** Adds a method with its handler and attachment limit (see {@link ServerMethodDefinition#withAttachments}). */
        public Builder addMethod(ServerMethodDefinition<?, ?> definition) {
            MethodDescriptor<?, ?> method = definition.method();
            if (!method.getServiceName().equals(serviceName)) {
                throw new IllegalArgumentException("method " + method.getFullMethodName() + " is not in service " + serviceName);
            }
            if (methods.putIfAbsent(method.getFullMethodName(), definition) != null) {
                throw new IllegalArgumentException("method added twice: " + method.getFullMethodName());
            }
            return this;
        }

        public ServiceDefinition build() {
            return new ServiceDefinition(serviceName, new LinkedHashMap<>(methods), schemaDescriptor);
        }
    }
}
