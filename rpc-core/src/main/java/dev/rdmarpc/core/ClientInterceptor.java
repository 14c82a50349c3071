package dev.rdmarpc.core;

/**
 * Intercepts outgoing calls of a {@link Channel}, as in grpc-java: it may add headers, wrap the call or its listener
 * (with {@link ForwardingClientCall} / {@link ForwardingClientCallListener}), or make the call on another channel.
 * Installed with {@link ClientInterceptors#intercept(Channel, ClientInterceptor...)} or
 * {@link AbstractStub#withInterceptors(ClientInterceptor...)}.
 */
@FunctionalInterface
public interface ClientInterceptor {

    /**
     * Creates the call a stub will drive; usually {@code next.newCall(method, callOptions)} wrapped in a forwarding
     * call. Called on the thread that makes the call.
     *
     * @param next the channel the call continues on (the next interceptor, or the real channel)
     */
    <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method, CallOptions callOptions,
                                                        Channel next);
}
