package dev.rdmarpc.core;

/** Something calls can be made on: a connection to a server, or a decorator of one. */
public interface Channel {

    /** Creates a call; nothing is sent until {@link ClientCall#start}. */
    <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options);

    /** The "host:port" this channel talks to. */
    String authority();
}
