package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.StreamObserver;

/**
 * Core's own call, which runs a plain async unary call straight into the caller's observer with no listener object:
 * the one unary path of core, taken by {@code ClientCalls} for a call of core's it was given and by the channel's
 * unary entry ({@link ChannelImpl#startPooledUnary}) on a stream of its own. For rpc-core alone.
 */
public interface DirectUnaryCall<ReqT, RespT> {
    /**
     * Starts the call with no request headers of its own, asks for the response, sends {@code request} and
     * half-closes; the call ends into {@code observer} as {@link UnaryObserverClose#close} says. A failure to send
     * cancels the call and is thrown.
     */
    void runUnary(ReqT request, StreamObserver<RespT> observer);
}
