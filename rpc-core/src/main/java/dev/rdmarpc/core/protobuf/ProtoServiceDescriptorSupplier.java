package dev.rdmarpc.core.protobuf;

import com.google.protobuf.Descriptors.ServiceDescriptor;

/**
 * The schema descriptor codegen puts on a generated service's {@link dev.rdmarpc.core.ServiceDefinition}: its .proto
 * file and the service in it, as grpc-java's {@code ProtoServiceDescriptorSupplier}.
 */
public interface ProtoServiceDescriptorSupplier extends ProtoFileDescriptorSupplier {
    /** The descriptor of the service. */
    ServiceDescriptor getServiceDescriptor();
}
