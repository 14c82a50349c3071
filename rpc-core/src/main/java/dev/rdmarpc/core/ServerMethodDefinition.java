package dev.rdmarpc.core;

/** A method paired with the handler that serves it. */
public record ServerMethodDefinition<ReqT, RespT>(MethodDescriptor<ReqT, RespT> method,
                                                  ServerCallHandler<ReqT, RespT> handler) {
    public static <ReqT, RespT> ServerMethodDefinition<ReqT, RespT> create(
            MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler) {
        return new ServerMethodDefinition<>(method, handler);
    }
}
