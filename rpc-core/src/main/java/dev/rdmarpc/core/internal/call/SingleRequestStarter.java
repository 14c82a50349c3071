package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.ServerCall;

/**
 * A handler of core's for single-request methods that core's server stream starts straight, when no interceptor wraps
 * it: it returns the call's {@link SingleRequestCallSink} (the response observer itself) and needs no listener object.
 * For rpc-core alone.
 */
public interface SingleRequestStarter<ReqT, RespT> {
    /** As {@code ServerCallHandler.startCall}, with the events going to the returned sink. */
    SingleRequestCallSink<ReqT> startSingleRequestCall(ServerCall<ReqT, RespT> call, Metadata headers);
}
