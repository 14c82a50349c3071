package dev.rdmarpc.transport.tcp;

import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.UniformStreamByteDistributor;

/**
 * Netty's HTTP/2 codec builder with one change: the streams' DATA share the connection window through a
 * {@link UniformStreamByteDistributor} (equal shares, as grpc-java's Netty transport does) instead of Netty's default
 * weighted fair queue, whose priority-tree upkeep gRPC does not use (gRPC sends no priorities) and which costs a
 * queue update on every write of every stream.
 */
final class UniformCodecBuilder extends Http2FrameCodecBuilder {
    private UniformCodecBuilder(boolean server) {
        // the connection says which side this is (the builder refuses a connection once server() was set)
        Http2Connection connection = new DefaultHttp2Connection(server);
        connection.remote().flowController(
                new DefaultHttp2RemoteFlowController(connection, new UniformStreamByteDistributor(connection)));
        connection(connection);
    }

    static UniformCodecBuilder server() {
        return new UniformCodecBuilder(true);
    }

    static UniformCodecBuilder client() {
        return new UniformCodecBuilder(false);
    }
}
