package dev.rdmarpc.core;

/** Starts the handling of one incoming call of one method. */
@FunctionalInterface
public interface ServerCallHandler<ReqT, RespT> {
    ServerCall.Listener<ReqT> startCall(ServerCall<ReqT, RespT> call, Metadata headers);
}
