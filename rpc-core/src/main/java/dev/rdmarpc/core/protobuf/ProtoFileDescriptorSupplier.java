package dev.rdmarpc.core.protobuf;

import com.google.protobuf.Descriptors.FileDescriptor;

/** Gives the .proto file a service was generated from, as grpc-java's {@code ProtoFileDescriptorSupplier}. */
public interface ProtoFileDescriptorSupplier {
    /** The descriptor of the .proto file (its dependencies reachable from it). */
    FileDescriptor getFileDescriptor();
}
