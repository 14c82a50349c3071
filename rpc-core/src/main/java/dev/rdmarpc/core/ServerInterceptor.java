package dev.rdmarpc.core;

/**
 * Intercepts incoming calls before their handler, as in grpc-java: it may read the request headers and the peer's
 * identity ({@link ServerCall#getConnection()}, {@link ServerCall#getSslSession()}), wrap the call or its listener
 * (with {@link ForwardingServerCall} / {@link ForwardingServerCallListener}), or refuse the call: close it with a
 * status and return a listener that does nothing, without calling {@code next}, so the handler never runs.
 * Installed with {@link ServerInterceptors#intercept(ServiceDefinition, ServerInterceptor...)} or
 * {@link RpcServer.Builder#intercept(ServerInterceptor)}.
 */
@FunctionalInterface
public interface ServerInterceptor {

    /**
     * Starts the call, usually with {@code next.startCall(call, headers)} (the next interceptor, or the handler).
     * Runs on the server's executor. An exception thrown here fails the call (a {@link StatusException} with its
     * status, anything else with UNKNOWN and the exception's message); the server carries on.
     */
    <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                          ServerCallHandler<ReqT, RespT> next);
}
