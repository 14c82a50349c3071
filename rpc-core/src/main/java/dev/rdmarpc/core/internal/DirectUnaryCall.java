package dev.rdmarpc.core.internal;

import dev.rdmarpc.core.StreamObserver;

/**
 * A call of core's that delivers a plain async unary call's response straight to the caller's observer, with no
 * listener object per call; {@code ClientCalls} uses it when it has core's call itself, not a wrapper. For rpc-core
 * alone.
 */
public interface DirectUnaryCall<RespT> {
    /**
     * Starts the call with no request headers of its own and asks for the response; the call ends into
     * {@code observer} as {@link UnaryObserverClose#close} says.
     */
    void startUnary(StreamObserver<RespT> observer);
}
