package dev.rdmarpc.grpc;

/** Whether grpc-netty is on the class path: grpc-compat's optional dependency for calls to standard gRPC servers. */
final class GrpcNetty {
    private static final boolean ON_CLASS_PATH = probe();

    private GrpcNetty() {
    }

    static boolean onClassPath() {
        return ON_CLASS_PATH;
    }

    private static boolean probe() {
        try {
            Class.forName("io.grpc.netty.InternalNettyChannelBuilder", false, GrpcNetty.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
