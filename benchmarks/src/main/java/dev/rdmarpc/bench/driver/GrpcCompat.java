package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.BenchException;
import io.grpc.ManagedChannelBuilder;
import io.grpc.ServerBuilder;

import java.lang.reflect.InvocationTargetException;

/**
 * Finds rdmarpc's grpc-java transport ({@code dev.rdmarpc.grpc.RdmaChannelBuilder} and
 * {@code RdmaServerBuilder}) at run time, through their standard grpc-java factory methods, so
 * this module builds before grpc-compat exists and says so plainly when it is missing.
 */
final class GrpcCompat {
    static final String CHANNEL_BUILDER = "dev.rdmarpc.grpc.RdmaChannelBuilder";
    static final String SERVER_BUILDER = "dev.rdmarpc.grpc.RdmaServerBuilder";

    private GrpcCompat() {
    }

    static ServerBuilder<?> serverBuilder(int port) {
        return (ServerBuilder<?>) invoke(SERVER_BUILDER, "forPort", new Class<?>[]{int.class}, port);
    }

    static ManagedChannelBuilder<?> channelBuilder(String host, int port) {
        return (ManagedChannelBuilder<?>) invoke(CHANNEL_BUILDER, "forAddress", new Class<?>[]{String.class, int.class}, host, port);
    }

    private static Object invoke(String className, String method, Class<?>[] types, Object... args) {
        Class<?> c;
        try {
            c = Class.forName(className);
        } catch (ClassNotFoundException e) {
            throw new BenchException(BenchException.FAILED, "grpc-compat: " + className
                    + " is not on the class path (build grpc-compat and rebuild the benchmark jar)");
        }
        try {
            return c.getMethod(method, types).invoke(null, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new BenchException(BenchException.FAILED, "grpc-compat: " + className + "." + method + " failed: " + cause, cause);
        } catch (ReflectiveOperationException e) {
            throw new BenchException(BenchException.FAILED, "grpc-compat: " + className + " has no usable " + method + ": " + e, e);
        }
    }
}
