package dev.rdmarpc.grpc;

import dev.rdmarpc.core.MethodDescriptor;

import java.io.InputStream;
import java.util.concurrent.ConcurrentHashMap;

/** rdmarpc descriptors for grpc methods, by full name and kind; bounded so arbitrary names cannot grow it. */
final class MethodCache {
    private static final int MAX_ENTRIES = 4096;

    private final ConcurrentHashMap<String, MethodDescriptor<InputStream, InputStream>> byName = new ConcurrentHashMap<>();

    /** The rdmarpc descriptor for a grpc method name and kind (UNKNOWN counts as bidirectional streaming). */
    MethodDescriptor<InputStream, InputStream> get(String fullMethodName, io.grpc.MethodDescriptor.MethodType type) {
        MethodDescriptor.MethodType coreType = coreType(type);
        MethodDescriptor<InputStream, InputStream> d = byName.get(fullMethodName);
        if (d != null && d.getType() == coreType) {
            return d;
        }
        d = MethodDescriptor.create(fullMethodName, coreType, StreamMarshaller.INSTANCE, StreamMarshaller.INSTANCE);
        if (byName.size() < MAX_ENTRIES) {
            byName.put(fullMethodName, d);
        }
        return d;
    }

    static MethodDescriptor.MethodType coreType(io.grpc.MethodDescriptor.MethodType type) {
        if (type == null) {
            return MethodDescriptor.MethodType.BIDI_STREAMING;
        }
        return switch (type) {
            case UNARY -> MethodDescriptor.MethodType.UNARY;
            case CLIENT_STREAMING -> MethodDescriptor.MethodType.CLIENT_STREAMING;
            case SERVER_STREAMING -> MethodDescriptor.MethodType.SERVER_STREAMING;
            case BIDI_STREAMING, UNKNOWN -> MethodDescriptor.MethodType.BIDI_STREAMING;
        };
    }
}
